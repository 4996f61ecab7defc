/* fuzz_program.c — the program decoder on arbitrary bytes, with checksum
 * checks off so that mutations reach the section decoders. */
#include <stddef.h>
#include <stdint.h>

#include <kiln/kiln.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_load_options options;
    kiln_program *program;
    kiln_load_options_default(&options);
    kiln_limits limits;
    kiln_limits_default(&limits);
    options.limits = &limits;
    options.verify = KILN_VERIFY_NONE;
    limits.max_decompressed_bytes = UINT64_C(64) << 20; /* keep the fuzzer's memory bounded */
    if (kiln_program_load_memory(data, size, &options, &program, NULL, NULL) == KILN_OK)
        kiln_program_free(program);
    return 0;
}
