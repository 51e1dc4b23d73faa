/* What the FMU binary (the FMI glue, the runtimes) needs of its operating system, in one place: Linux (x86_64,
 * aarch64), macOS (x86_64, arm64) and Windows (x86_64). Paths are UTF-8 everywhere; on Windows they are converted
 * to UTF-16 at the system call. */
#ifndef MECHFMU_PLATFORM_H
#define MECHFMU_PLATFORM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#define NOGDI /* wingdi.h defines ERROR */
#include <windows.h>
typedef INIT_ONCE platform_once_t;
#define PLATFORM_ONCE_INIT INIT_ONCE_STATIC_INIT
typedef SRWLOCK platform_mutex_t;
#define PLATFORM_MUTEX_INIT SRWLOCK_INIT
#else
#include <pthread.h>
typedef pthread_once_t platform_once_t;
#define PLATFORM_ONCE_INIT PTHREAD_ONCE_INIT
typedef pthread_mutex_t platform_mutex_t;
#define PLATFORM_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#endif

#ifdef _WIN32
#define PATH_SEPARATOR "\\"
#else
#define PATH_SEPARATOR "/"
#endif

#ifdef __GNUC__
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NOINLINE __attribute__((noinline)) /* a path kept out of its caller's common one */
#else
#define PRINTF_LIKE(f, a)
#define NOINLINE
#endif

void platform_once(platform_once_t *once, void (*function)(void));
void platform_lock(platform_mutex_t *mutex);
void platform_unlock(platform_mutex_t *mutex);

/* Make the Python runtime `version` ("3.11") available in this process: the one already in it (a Python host; of
 * another version `note` says so), else the first library found where this platform's Python installs put it (see
 * platform.c). 0, or -1 with `error` listing what was tried and what to install. */
int platform_load_python(const char *version, char *error, size_t error_size, char *note, size_t note_size);
/* A function or object of the loaded Python runtime, NULL if it has none of that name. */
void *platform_python_symbol(const char *name);

/* This binary's file as the host loaded it (UTF-8); 0, or -1. */
int platform_own_path(char *path, size_t size);
/* This binary held open (an opaque handle, NULL if that failed), and let go. */
void *platform_hold_own_library(void);
void platform_release_library(void *handle);

/* CRC-32 (IEEE 802.3, the checksum of zip and PNG) of `size` bytes, continuing `crc` (0 to start): it detects every
 * change of one bit and of any run of up to 32 bits (the FMU states' checksums). */
uint32_t platform_crc32(const void *data, size_t size, uint32_t crc);

/* Zeroed memory for an instance's block of `size` bytes, 64-byte aligned, NULL if out of memory (or `size` is 0):
 * blocks made one after the other lie side by side in shared chunks, so a step over thousands of instances touches
 * few pages and cache lines. Thread-safe; released with platform_block_free (NULL: nothing). */
void *platform_block_alloc(size_t size);
void platform_block_free(void *block);

FILE *platform_fopen(const char *path, const char *mode);
/* vsnprintf into a new malloc'd string (NULL if out of memory). */
char *platform_format(const char *format, va_list args);
char *platform_strndup(const char *text, size_t n);

/* fmuResourceLocation, a file URI (RFC 8089), as a local path (malloc'd), or NULL with `why` set: "file:" then an
 * empty or "localhost" authority and an absolute path, percent-decoded (strictly: two hex digits; no encoded NUL);
 * on Windows also a drive ("file:///C:/x", "file:/C:/x", "file://C:/x", the old "C|") or a UNC share
 * ("file://host/share/x" -> \\host\share\x), with '\' for '/'. */
char *platform_resource_path(const char *uri, char *why, size_t size);

#endif
