/* borrowed_attribute.c — a public attribute as a kernel's, uncopied (borrowed_attribute.h). */
#include "borrowed_attribute.h"

#include <stdint.h>

/* A pointer a borrowed attribute holds: its const dropped, never written through. */
static void *borrowed(const void *p)
{
    return (void *)(uintptr_t)p;
}

kiln_node_attribute borrowed_attribute(kiln_attribute a)
{
    return (kiln_node_attribute){.name = borrowed(a.name), .type = a.type, .i = a.i, .f = a.f, .s = borrowed(a.s),
                                 .ints = borrowed(a.ints), .floats = borrowed(a.floats), .count = a.count};
}
