/* What every FMI version's glue layer keeps alike (glue.c). */
#ifndef MECHFMU_GLUE_H
#define MECHFMU_GLUE_H

#include <stddef.h>

/* The live instances of this process: a host's handle is found in O(1) without a lock and without reading through
 * it (a freed or foreign pointer is only compared); adding and removing take a lock. */
int glue_add(void *instance);          /* 0, or -1 when out of memory */
void *glue_find(const void *handle);   /* the live instance, or NULL for a handle that is none (freed, foreign) */
int glue_remove(const void *instance); /* 1, or 0 if it was not live (freed twice, or not ours) */

/* The phase a serialized state's body holds, as the runtime serializes it: 1 initialized, 0 not, -1 not known;
 * *model_exchange likewise (1 taken in Model Exchange use). */
int glue_body_phase(const char *body, size_t n, int *model_exchange);

/* Whether `token` is the one this FMU was packed with (resources/mechfmu_guid.txt in the resources `folder`, written
 * with modelDescription.xml, so a host need not unpack the model description): 0, or -1 with `why` naming the
 * token as the standard does (fmuGUID, instantiationToken), what it is (GUID, instantiation token) and the folder's argument (fmuResourceLocation,
 * resourcePath). */
int glue_check_token(const char *folder, const char *token, const char *token_name, const char *noun,
                     const char *location_name, char *why, size_t size);

#endif
