/* `raspfut train`: embedding-only training on Dyck-1 and k-hop induction (docs/train.md).
 * tools/raspfut.c hands it the arguments after the word `train`. Returns the exit status:
 * 0 success, 2 bad usage or a bad file. */
#ifndef RASPCC_TRAIN_CLI_H
#define RASPCC_TRAIN_CLI_H

int tr_cli_main(int argc, char **argv);

#endif
