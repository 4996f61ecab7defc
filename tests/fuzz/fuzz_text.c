/*
 * fuzz_text.c — the text assembler on arbitrary bytes. Weight files are
 * looked up under a directory that does not exist, so no input makes the
 * target read the file system. Whatever assembles is also sealed and, if
 * sealing succeeds, loaded back: the builder must never seal a program the
 * loader refuses. The same bytes are also read as a one-line check spec
 * (kiln_check_spec_parse), the check grammar's other entry.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>
#include <kiln/text.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The spec parser takes a C string: the bytes up to the first NUL. */
static void parse_as_check_spec(const uint8_t *data, size_t size)
{
    char *spec = malloc(size + 1);
    if (!spec)
        return;
    memcpy(spec, data, size);
    spec[size] = '\0';
    kiln_check_spec parsed;
    if (kiln_check_spec_parse(spec, &parsed, NULL) == KILN_OK && !parsed.input)
        abort(); /* a parsed spec names its input */
    kiln_check_spec_free(&parsed);
    free(spec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_as_check_spec(data, size);
    kiln_builder *builder = NULL;
    if (kiln_text_assemble((const char *)data, size, "fuzz.ktxt", "/nonexistent/kiln-fuzz", &builder, NULL) !=
        KILN_OK)
        return 0;
    void *bytes = NULL;
    size_t length = 0;
    if (kiln_builder_encode(builder, NULL, &bytes, &length, NULL) == KILN_OK) {
        kiln_program *program = NULL;
        kiln_load_options options;
        kiln_load_options_default(&options);
        kiln_status status = kiln_program_load_memory(bytes, length, &options, &program, NULL, NULL);
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
