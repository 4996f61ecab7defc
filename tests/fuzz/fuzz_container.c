/* fuzz_container.c — the container reader on arbitrary bytes: header, table,
 * trailer, every section's CRC, and the digest. */
#include <stddef.h>
#include <stdint.h>

#include "format/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_container c;
    kiln_container_limits limits = {
        .max_sections = 64,
        .max_section_raw_size = UINT64_C(1) << 32,
        .max_decompressed_size = UINT64_C(64) << 20, /* keep the fuzzer's memory bounded */
    };
    if (kiln_container_parse(data, size, &limits, &c, NULL) != KILN_OK)
        return 0;
    for (uint32_t i = 0; i < c.section_count; i++) {
        kiln_section_view view;
        if (kiln_container_section(&c, i, KILN_CHECK_CRC_AND_HASH, &view, NULL) == KILN_OK)
            kiln_section_view_release(&view);
    }
    (void)kiln_container_verify_digest(&c, NULL);
    (void)kiln_container_verify_gaps(&c, NULL);
    kiln_container_release(&c);
    return 0;
}
