/* Runs a compiled model with libraspcc, as `rasprun MODEL INPUT...` does: the weights alone,
 * on the forward pass of runtime/forward.h.
 *
 *   raspcc reverse.rasp -o reverse.bin --vocab abcdehlo --max-len 8
 *   cc -std=c11 run_model.c $(pkg-config --cflags --libs raspcc) -o run_model
 *   ./run_model reverse.bin hello '"abc"'        ->  [o, l, l, e, h]
 *                                                    [c, b, a]
 * Exit status: 0 every input ran, 1 some input failed, 2 bad usage or a bad model file. */
#include <stdio.h>

#include "ir/input.h"
#include "ir/value.h"
#include "runtime/forward.h"
#include "runtime/model_io.h"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: run_model MODEL.bin INPUT...\n");
        return 2;
    }
    char err[512];
    Model model;
    if (!model_read(argv[1], &model, err, sizeof err)) { /* checks the format and the checksum */
        fprintf(stderr, "run_model: %s\n", err);
        return 2;
    }
    Workspace ws; /* the buffers and sparse plans of the forward pass, made once per model */
    if (!workspace_init(&ws, &model, err, sizeof err)) {
        fprintf(stderr, "run_model: %s\n", err);
        model_free(&model);
        return 2;
    }
    int status = 0;
    for (int i = 2; i < argc; i++) {
        Arena scratch; /* the input's atoms and the output's, freed after each input */
        arena_init(&scratch);
        Value *in, *out;
        size_t n;
        if (input_parse(&scratch, argv[i], &in, &n, err, sizeof err) &&
            model_run(&model, &ws, in, n, &scratch, &out, err, sizeof err)) {
            putchar('[');
            for (size_t k = 0; k < n; k++) {
                if (k) fputs(", ", stdout);
                value_print_repl(stdout, out[k]);
            }
            puts("]");
        } else {
            printf("error: %s\n", err);
            status = 1;
        }
        arena_free(&scratch);
    }
    workspace_free(&ws);
    model_free(&model);
    return status;
}
