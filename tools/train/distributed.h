/* distributed.h — parity-train's data-parallel mode (tools/train/distributed.c).
 * parity-train hands the whole command line over when it names --distributed or --slices. */
#ifndef PARITY_TRAIN_DISTRIBUTED_H
#define PARITY_TRAIN_DISTRIBUTED_H

/* 1 when argv asks for the data-parallel mode (--distributed or --slices N). */
int train_distributed_wanted(int argc, char **argv);
/* The whole program in that mode; returns the exit status. */
int train_distributed_main(int argc, char **argv);

#endif
