/*
 * borrowed_attribute.h — the node attribute a kernel reads, made from a
 * public kiln_attribute without copying, for tests that call kernels
 * directly.
 */
#ifndef KILN_TESTS_BORROWED_ATTRIBUTE_H
#define KILN_TESTS_BORROWED_ATTRIBUTE_H

#include <kiln/kiln.h>

#include "attribute.h"

/*
 * The node attribute for `a`, borrowing a's name, string and arrays (it
 * is never released). kiln_node_attribute's pointers are not const
 * because a model owns and frees what they point to; a kernel only reads
 * them, so a borrowed attribute drops the const of a's: here only.
 */
kiln_node_attribute borrowed_attribute(kiln_attribute a);

#endif
