/* Header-only module: see include/CMediaKitAPI.h. */
