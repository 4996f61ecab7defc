/*
 * gen_deep_chain.c — write the model of onnx_deep_symbolic_chain (onnx_builder.h):
 * `gen_deep_chain OUT.onnx [ADDS]` (default 10,000 adds). It made
 * tests/fuzz/crashers/onnx-deep-symbolic-chain, which fuzz_replay_onnx replays.
 */
#include <stdio.h>
#include <stdlib.h>

#include "onnx_builder.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: gen_deep_chain OUT.onnx [ADDS]\n");
        return 2;
    }
    uint32_t adds = argc == 3 ? (uint32_t)strtoul(argv[2], NULL, 10) : 10000;
    size_t size;
    uint8_t *bytes = onnx_pack(onnx_deep_symbolic_chain(adds), &size);
    FILE *f = fopen(argv[1], "wb");
    int ok = f && fwrite(bytes, 1, size, f) == size;
    ok = f && fclose(f) == 0 && ok;
    onnx_arena_release();
    if (!ok) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
