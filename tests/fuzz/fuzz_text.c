/*
 * fuzz_text.c — the text assembler on arbitrary bytes. Weight files are
 * looked up under a directory that does not exist, so no input makes the
 * target read the file system. Whatever assembles is also sealed and, if
 * sealing succeeds, loaded back: the builder must never seal a program the
 * loader refuses.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <kiln/kiln.h>
#include <kiln/text.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kiln_builder *builder = NULL;
    if (kiln_text_assemble((const char *)data, size, "fuzz.ktxt", "/nonexistent/kiln-fuzz", &builder, NULL) !=
        KILN_OK)
        return 0;
    void *bytes = NULL;
    size_t length = 0;
    if (kiln_builder_encode(builder, &bytes, &length, NULL) == KILN_OK) {
        kiln_program *program = NULL;
        kiln_load_options options;
        kiln_load_options_default(&options);
        kiln_status status = kiln_program_load_memory(bytes, length, &options, &program, NULL);
        /* Training-mode programs seal fine and are refused only by this
         * inference runtime; a text may exceed the reader's default limits
         * (e.g. a metadata value over 4096 bytes), which writers only
         * SHOULD respect. Anything else sealed but unloadable is a bug. */
        if (status != KILN_OK && status != KILN_ERR_UNSUPPORTED_MODE && status != KILN_ERR_LIMIT)
            abort();
        kiln_program_free(program);
        free(bytes);
    }
    kiln_builder_free(builder);
    return 0;
}
