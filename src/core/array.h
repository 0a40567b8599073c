/* The number of elements of an array (not of a pointer: -Wsizeof-pointer-div says so). */
#ifndef LATSCOPE_CORE_ARRAY_H
#define LATSCOPE_CORE_ARRAY_H

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
