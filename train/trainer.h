/* The training loop: fresh examples every step from the task's generator, Adam on the
 * trainable tensors, a held-out test set drawn once from its own random stream, accuracy on it.
 *
 * Random streams (all from one data seed): the test set, then the training examples. The test
 * set is drawn from the same distribution as the training examples (an i.i.d. held-out set).
 * Dyck-1 has few strings at small lengths (at n = 16 a long run draws almost every test
 * string for training too), so the result also counts the test strings that training drew
 * (seen_in_training) and how many of the others were answered right (unseen_correct).
 * Excluding the test strings from training instead would remove most of the probability of
 * the short lengths from the training distribution. No I/O here: progress goes to a callback. */
#ifndef RASPCC_TRAIN_TRAINER_H
#define RASPCC_TRAIN_TRAINER_H

#include "train/model.h"
#include "train/task.h"

typedef struct TrTrainOptions {
    size_t steps;      /* Adam steps */
    size_t batch;      /* examples per step (<= the model's batch_cap) */
    size_t test_size;  /* held-out examples */
    TrAdam adam;
    bool cosine;       /* learning rate decays from lr to lr/10 along a cosine */
    uint64_t data_seed;
    size_t eval_every; /* held-out accuracy every this many steps (0: only at the end) */
    /* called after every step (step 1..steps) with its loss; test_acc < 0 when not evaluated */
    void (*progress)(void *ctx, size_t step, size_t steps, double loss, double test_acc);
    void *progress_ctx;
} TrTrainOptions;

typedef struct TrTrainResult {
    double *loss;           /* per step, steps entries (malloc'ed; tr_train_result_free) */
    size_t steps;
    double test_accuracy;   /* fraction of the test set's answers predicted right */
    double test_loss;
    size_t test_answers, test_correct;
    size_t test_examples_correct, test_examples; /* examples with every answer right */
    size_t seen_in_training; /* test examples whose string was also drawn for training */
    size_t unseen_correct;   /* test examples never drawn for training with every answer right */
    double seconds;          /* wall-clock time of the training steps (not the test) */
    double cpu_seconds;      /* processor time of the same steps */
} TrTrainResult;

/* Defaults: 1000 steps, batch 32, 2000 test examples, Adam lr 1e-2 (betas 0.9, 0.999,
 * eps 1e-8, clip 1), cosine decay, eval only at the end. */
TrTrainOptions tr_train_defaults(void);

bool tr_train(TrModel *md, const TrTask *task, const TrTrainOptions *o, TrTrainResult *r, char *err, size_t errsize);
void tr_train_result_free(TrTrainResult *r);

/* Draws the held-out set of data seed `seed` (what tr_train tests on). */
void tr_test_set(const TrTask *task, uint64_t seed, TrExample *ex, size_t n);
/* Accuracy of the model on examples (in batches of the model's batch_cap); fills the counts. */
double tr_evaluate(TrModel *md, const TrExample *ex, size_t n, size_t *answers, size_t *correct,
                   size_t *examples_correct, double *loss);

/* Seconds since an arbitrary origin (monotonic), and processor time used by the process. */
double tr_now(void);
double tr_cpu_now(void);

#endif
