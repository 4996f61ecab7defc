/*
 * fuzz_run.c — the whole path: open, plan a session, and run on inputs
 * derived from the fuzz data (shapes at each dim's minimum, maximum or just
 * outside), so guards and kernels see hostile programs too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <kiln/kiln.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Pick an extent for an input axis from one fuzz byte. */
static int64_t pick_extent(uint8_t choice)
{
    static const int64_t extents[] = {0, 1, 2, 3, 4, 5, 8, 16};
    return extents[choice % 8];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_load_options options;
    kiln_program *program;
    kiln_session *session;
    kiln_load_options_default(&options);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    options.verify = KILN_VERIFY_NONE;
    limits.max_arena_bytes = UINT64_C(64) << 20; /* keep the fuzzer's memory bounded */
    limits.max_weight_bytes = UINT64_C(64) << 20;
    limits.max_decompressed_bytes = UINT64_C(64) << 20;
    if (kiln_program_load_memory(data, size, &options, &program, NULL, NULL) != KILN_OK)
        return 0;
    if (kiln_session_new(program, NULL, &session, NULL) == KILN_OK) {
        uint32_t inputs = kiln_program_input_count(program);
        kiln_tensor *tensors[16] = {0};
        uint8_t seed = size ? data[size - 1] : 0;
        for (uint32_t i = 0; i < inputs && i < 16; i++) {
            kiln_io_info io;
            int64_t shape[KILN_MAX_RANK];
            kiln_program_input(program, i, &io);
            for (uint32_t a = 0; a < io.rank; a++)
                shape[a] = pick_extent((uint8_t)(seed + 3 * a + 7 * i));
            if (kiln_tensor_new(io.dtype, io.rank, shape, &tensors[i], NULL) != KILN_OK)
                continue;
            if (kiln_session_set_input(session, io.name, tensors[i], NULL) != KILN_OK)
                break;
        }
        if (kiln_session_run(session, NULL) == KILN_OK)
            (void)kiln_session_output(session, 0);
        /* Evidence replay parses and compares stored tensors too. */
        for (uint32_t c = 0; c < kiln_program_evidence_count(program) && c < 4; c++) {
            kiln_evidence_result results[16];
            if (kiln_program_evidence_output_count(program, c) <= 16 &&
                kiln_program_replay_evidence(program, c, results, NULL) == KILN_OK)
                (void)results[0].passed;
        }
        for (uint32_t i = 0; i < 16; i++)
            kiln_tensor_free(tensors[i]);
        kiln_session_free(session);
    }
    kiln_program_free(program);
    return 0;
}
