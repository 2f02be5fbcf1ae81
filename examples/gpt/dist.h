/* dist.h -- data-parallel training of the character model over MPI: every
 * rank holds the whole model and computes its own rows of each batch; the
 * gradients are averaged across the ranks before the clipping and the AdamW
 * step, so `mpirun -np N train_austen --batch B` trains as one process with
 * --batch N*B. Without MPI in the library (GGMLR_MPI off) it is one process
 * of rank 0 and every function below is a no-op or the plain call. */
#ifndef GPT_DIST_H
#define GPT_DIST_H

#include "data.h"
#include "gpt.h"
#include "train.h"

/* MPI_Init; on ranks other than 0, stdout goes to /dev/null (only rank 0
 * reports; errors go to stderr everywhere). false + message on failure. */
bool dist_init(int * argc, char *** argv);
/* The end of the program with this exit status: MPI_Finalize after success;
 * after a failure on any rank, MPI_Abort, which ends every rank at once
 * instead of leaving them waiting for the failed one. */
int dist_finish(int status);
int dist_rank(void);
int dist_size(void);

/* gpt_load on rank 0; the other ranks receive the configuration, vocabulary
 * and step and build a model of that shape (dist_attach fills it). */
bool dist_load(struct gpt_model * m, const char * path, unsigned char * vocab, int64_t * step);
/* Every rank must agree on the model, the vocabulary, the text and the
 * options that shape the training (not --threads): false with a message on
 * every rank naming what differs. */
bool dist_check(const struct gpt_config * cfg, const struct train_opts * o, const struct corpus * data, int64_t eval_interval);
/* Make t a replica: its rows of each batch; its optimization context
 * reduces the gradients over the ranks, after taking rank 0's parameters and
 * AdamW moments. false + message on failure. */
bool dist_attach(struct trainer * t);

#endif
