/*
 * cmd.h - the subcommands; each is int cmd_<name>(argc, argv) in its own
 * file under cmd/, and is listed once in the command table of stint.c.
 */
#ifndef STINT_CMD_H
#define STINT_CMD_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_recover(int argc, char **argv);

#endif
