# man.cmake - one manual page from one doc/stint*.md: a title line that
# go-md2man understands, then the page as written (cmake -P, from CMakeLists.txt).
file(READ ${SRC} body)
# a '|' inside a table cell is escaped for Markdown; a manual page shows it plain
string(REPLACE "\\|" "|" body "${body}")
file(WRITE ${OUT}.md "% ${TITLE} 1 \"\" \"stint ${VERSION}\" \"stint manual\"\n\n${body}")
execute_process(COMMAND ${MD2MAN} -in ${OUT}.md -out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go-md2man failed on ${SRC}")
endif()
file(REMOVE ${OUT}.md)
