/* dot_render.h — rendering DOT text with Graphviz's `dot` program (dot_render.c). */
#ifndef KILN_TOOLS_DOT_RENDER_H
#define KILN_TOOLS_DOT_RENDER_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Find Graphviz's `dot` on PATH.
 * @return true with its path in `out`, or false when it is not there.
 */
bool dot_render_find(char *out, size_t size);

/*
 * Run `dot_program -T<format> -o <path>` with `text` (`size` bytes of DOT)
 * on its standard input; its own messages go to our standard error.
 * @return true if it ran and exited 0; false after printing an error.
 */
bool dot_render(const char *dot_program, const char *format, const char *path, const char *text, size_t size);

#endif
