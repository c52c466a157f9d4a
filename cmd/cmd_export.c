/* cmd_export.c - being written (issue 4) */
#include "cmd.h"
#include "../lib/util.h"
int cmd_export(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	die("export: not available yet");
}
