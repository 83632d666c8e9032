/* cmd.h - the kdalloc commands, which main.c runs by name: each takes the
 * arguments from the command's name on (argv[0] is the name) and returns the
 * exit status. */
#ifndef KDA_CMD_H
#define KDA_CMD_H

int cmd_build(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_gen(int argc, char **argv);

#endif
