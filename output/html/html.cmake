# html.cmake - embeds the HTML report's stylesheet and script
# (output/html/stint.css, stint.js) into stint-output as the C strings of
# out_html_assets.h, generated in the build tree by embed.cmake.
set(STINT_HTML_GEN ${CMAKE_BINARY_DIR}/gen/out_html_assets.h)
set(STINT_HTML_ASSETS ${CMAKE_CURRENT_LIST_DIR}/stint.css ${CMAKE_CURRENT_LIST_DIR}/stint.js)
add_custom_command(OUTPUT ${STINT_HTML_GEN}
  COMMAND ${CMAKE_COMMAND} -DOUT=${STINT_HTML_GEN} -DCSS=${CMAKE_CURRENT_LIST_DIR}/stint.css
          -DJS=${CMAKE_CURRENT_LIST_DIR}/stint.js -P ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  DEPENDS ${STINT_HTML_ASSETS} ${CMAKE_CURRENT_LIST_DIR}/embed.cmake
  COMMENT "Embedding the HTML report's CSS and JavaScript")
target_sources(stint-output PRIVATE ${STINT_HTML_GEN})
target_include_directories(stint-output PRIVATE ${CMAKE_BINARY_DIR}/gen)
