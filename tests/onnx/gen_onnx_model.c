/*
 * gen_onnx_model.c — write a hand-built ONNX model (onnx_builder.h) to a file,
 * for tests that see the importer through <kiln/onnx.h> only and for the
 * fuzz crashers:
 *
 *   gen_onnx_model deep-chain OUT.onnx [ADDS]   onnx_deep_symbolic_chain (default
 *       10,000 adds; it made tests/fuzz/crashers/onnx-deep-symbolic-chain)
 *   gen_onnx_model dense OUT.onnx               y = Relu(x W + b), x: f32[batch, 4],
 *       W[i][j] = i - j, b[j] = j (3 columns)
 *   gen_onnx_model unsupported OUT.onnx         Relu beside three ops kiln lacks
 *   gen_onnx_model nested-if OUT.onnx [LEVELS]  onnx_nested_if_bytes (default 3000
 *       levels; it made tests/fuzz/crashers/onnx-nested-if-3000)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_builder.h"

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static Onnx__ModelProto *dense_model(void)
{
    static const int64_t w_shape[] = {4, 3}, b_shape[] = {3};
    float w[12], b[3];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            w[i * 3 + j] = (float)(i - j);
    for (int j = 0; j < 3; j++)
        b[j] = (float)j;
    return onnx_model(8, 13,
                      (Onnx__NodeProto *[]){onnx_node("MatMul", "mm", L("x", "w"), L("xw"), NULL),
                                            onnx_node("Add", "add", L("xw", "b"), L("z"), NULL),
                                            onnx_node("Relu", "relu", L("z"), L("y"), NULL), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("x", 1, 2, L("batch", "4")), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("y", 1, 0, NULL), NULL},
                      (Onnx__TensorProto *[]){onnx_tensor_f32("w", 2, w_shape, w, 1),
                                              onnx_tensor_f32("b", 1, b_shape, b, 0), NULL});
}

static Onnx__ModelProto *unsupported_model(void)
{
    return onnx_model(8, 13,
                      (Onnx__NodeProto *[]){onnx_node("NonZero", "nz", L("x"), L("a"), NULL),
                                            onnx_node("StringSplit", "split", L("x"), L("c"), NULL),
                                            onnx_node("Relu", "relu", L("x"), L("y"), NULL),
                                            onnx_node("Loop", "loop", L("x"), L("d"), NULL), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("x", 1, 2, L("2", "3")), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("y", 1, 0, NULL), NULL}, NULL);
}

/* y = a + b, a: f32[p], b: f32[q]: a broadcast no declared range of p and q proves. */
static Onnx__ModelProto *broadcast_model(void)
{
    return onnx_model(8, 13, (Onnx__NodeProto *[]){onnx_node("Add", "add", L("a", "b"), L("y"), NULL), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("a", 1, 1, L("p")), onnx_value("b", 1, 1, L("q")), NULL},
                      (Onnx__ValueInfoProto *[]){onnx_value("y", 1, 0, NULL), NULL}, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gen_onnx_model deep-chain|dense|unsupported|broadcast|nested-if OUT.onnx [ADDS|LEVELS]\n");
        return 2;
    }
    bool nested_if = strcmp(argv[1], "nested-if") == 0;
    Onnx__ModelProto *model = nested_if ? NULL
                              : strcmp(argv[1], "deep-chain") == 0
                                  ? onnx_deep_symbolic_chain(argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 10000)
                              : strcmp(argv[1], "dense") == 0       ? dense_model()
                              : strcmp(argv[1], "unsupported") == 0 ? unsupported_model()
                              : strcmp(argv[1], "broadcast") == 0   ? broadcast_model()
                                                                    : NULL;
    if (!model && !nested_if) {
        fprintf(stderr, "gen_onnx_model: unknown model '%s'\n", argv[1]);
        return 2;
    }
    size_t size;
    uint8_t *bytes = nested_if ? onnx_nested_if_bytes(argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 3000, &size)
                               : onnx_pack(model, &size);
    FILE *f = fopen(argv[2], "wb");
    int ok = f && fwrite(bytes, 1, size, f) == size;
    ok = f && fclose(f) == 0 && ok;
    onnx_arena_release();
    if (!ok) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
