/* cmd_html.c - being written (issue 4) */
#include "cmd.h"
#include "../lib/util.h"
int cmd_html(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("html: not available yet");
}
