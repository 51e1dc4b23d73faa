/*
 * The instances' blocks of components/native/platform.c (platform_block_alloc, platform_block_free), on their own.
 *
 * Usage: instance_blocks_host THREADS ROUNDS
 * Each of THREADS threads makes ROUNDS rounds: it takes 300 blocks of sizes from 1 byte to 20 KB (some beyond a
 * chunk's quarter, which get a chunk of their own), checks that each is 64-byte aligned and zeroed, fills it with a
 * pattern of its own, checks every pattern again (no two live blocks overlap, whatever the other threads do), and
 * releases them in a shuffled order. With one thread it also checks that blocks taken one after the other lie side
 * by side (the point of the chunks) and that a size of 0 or beyond half the address space gives NULL.
 * Prints "blocks N" (the blocks taken) and exits 0, or prints the first failure and exits 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

#define PER_ROUND 300

typedef struct {
    int thread, rounds;
    long taken;
    char failure[200];
} Job;

static uint64_t next_random(uint64_t *x) {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void *work(void *argument) {
    Job *job = argument;
    uint64_t random = 0x9e3779b97f4a7c15ULL * (uint64_t)(job->thread + 1);
    unsigned char *blocks[PER_ROUND];
    size_t sizes[PER_ROUND];
    for (int round = 0; round < job->rounds; ++round) {
        for (int i = 0; i < PER_ROUND; ++i) {
            uint64_t r = next_random(&random);
            sizes[i] = r % 16 == 0 ? 16384 + r % 4096 : 1 + r % 1500;
            blocks[i] = platform_block_alloc(sizes[i]);
            if (!blocks[i]) {
                snprintf(job->failure, sizeof job->failure, "no block of %zu bytes", sizes[i]);
                return NULL;
            }
            if ((uintptr_t)blocks[i] % 64) {
                snprintf(job->failure, sizeof job->failure, "block %p not 64-byte aligned", (void *)blocks[i]);
                return NULL;
            }
            for (size_t k = 0; k < sizes[i]; ++k)
                if (blocks[i][k]) {
                    snprintf(job->failure, sizeof job->failure, "byte %zu of a new block of %zu is not 0", k, sizes[i]);
                    return NULL;
                }
            memset(blocks[i], (job->thread * 131 + i) & 0xff, sizes[i]);
            ++job->taken;
        }
        for (int i = 0; i < PER_ROUND; ++i)
            for (size_t k = 0; k < sizes[i]; ++k)
                if (blocks[i][k] != ((job->thread * 131 + i) & 0xff)) {
                    snprintf(job->failure, sizeof job->failure, "block %d of thread %d overwritten at byte %zu", i,
                             job->thread, k);
                    return NULL;
                }
        for (int i = PER_ROUND - 1; i > 0; --i) { /* Fisher-Yates */
            int j = (int)(next_random(&random) % (uint64_t)(i + 1));
            unsigned char *b = blocks[i];
            blocks[i] = blocks[j], blocks[j] = b;
        }
        for (int i = 0; i < PER_ROUND; ++i) platform_block_free(blocks[i]);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s THREADS ROUNDS\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]), rounds = atoi(argv[2]);
    if (threads < 1 || threads > 16 || rounds < 1) return 2;
    if (threads == 1) {
        if (platform_block_alloc(0) || platform_block_alloc(SIZE_MAX / 2 + 1)) {
            printf("a block of 0 bytes or of half the address space was given\n");
            return 1;
        }
        unsigned char *a = platform_block_alloc(700), *b = platform_block_alloc(700), *c = platform_block_alloc(700);
        if (!(b == a + 704 && c == b + 704)) {
            printf("blocks of 700 bytes one after the other are not side by side: %p %p %p\n", (void *)a, (void *)b,
                   (void *)c);
            return 1;
        }
        platform_block_free(b);
        platform_block_free(a);
        platform_block_free(c);
        platform_block_free(NULL);
    }
    pthread_t ids[16];
    Job jobs[16];
    for (int t = 0; t < threads; ++t) {
        jobs[t] = (Job){t, rounds, 0, ""};
        if (pthread_create(&ids[t], NULL, work, &jobs[t]) != 0) return 2;
    }
    long taken = 0;
    int failed = 0;
    for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        taken += jobs[t].taken;
        if (jobs[t].failure[0] && !failed) {
            printf("thread %d: %s\n", t, jobs[t].failure);
            failed = 1;
        }
    }
    if (failed) return 1;
    printf("blocks %ld\n", taken);
    return 0;
}
