/* Texture/array entry points that pass structs by value (HIP 5.2 signatures); the work is in Python
 * (pyhip.capi.textures), reached through pointer-taking functions. */
typedef struct { int x, y, z, w; int f; } pyhip_channel_desc;     /* hipChannelFormatDesc */
typedef struct { size_t width, height, depth; } pyhip_extent;      /* hipExtent */

int pyhip_hipMalloc3DArray(void** array, const void* desc, const void* extent, unsigned int flags);
int pyhip_hipMallocMipmappedArray(void** mipmappedArray, const void* desc, const void* extent,
                                  unsigned int numLevels, unsigned int flags);

/* HIP 5.2 returns the descriptor as given (hipamd's hipCreateChannelDesc) */
pyhip_channel_desc hipCreateChannelDesc(int x, int y, int z, int w, int f) {
    pyhip_channel_desc d = {x, y, z, w, f};
    return d;
}

int hipMalloc3DArray(void** array, const void* desc, pyhip_extent extent, unsigned int flags) {
    return pyhip_hipMalloc3DArray(array, desc, &extent, flags);
}

int hipMallocMipmappedArray(void** mipmappedArray, const void* desc, pyhip_extent extent, unsigned int numLevels,
                            unsigned int flags) {
    return pyhip_hipMallocMipmappedArray(mipmappedArray, desc, &extent, numLevels, flags);
}
