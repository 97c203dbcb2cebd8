/*
 * io_packets.c — reads standard input through mk_demuxer_open_io with a read callback only
 * (no seek, no size: a stream read once, as from a pipe or a socket) and prints one CSV line
 * per packet, as `mk-probe --packets` does: track,pts,dts,duration,size,offset,flags.
 *
 *   io_packets            every packet (mk_demuxer_read_packet)
 *   io_packets seek S     reads one packet, then asks mk_demuxer_seek(S): prints the status's
 *                         name and mk_last_error() on standard error and exits 3 when refused
 */
#include <mediakit/mediakit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t read_stdin(void *user, uint8_t *buffer, size_t size) {
    (void)user;
    size_t n = fread(buffer, 1, size, stdin);
    if (n == 0 && ferror(stdin)) return -1;
    return (int64_t)n;
}

int main(int argc, char **argv) {
    mk_io io;
    memset(&io, 0, sizeof io);
    io.struct_size = sizeof io;
    io.read = read_stdin;            /* seek and size stay NULL */
    io.name = "stdin";
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open_io(&dmx, &io, NULL) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    mk_packet *pkt = NULL;
    mk_packet_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (argc == 3 && strcmp(argv[1], "seek") == 0) {
        mk_status st = mk_demuxer_read_packet(dmx, &pkt);
        mk_packet_free(&pkt);
        if (st != MK_OK) { fprintf(stderr, "read: %s\n", mk_last_error()); mk_demuxer_close(&dmx); return 1; }
        st = mk_demuxer_seek(dmx, atof(argv[2]));
        if (st != MK_OK) {
            fprintf(stderr, "%s: %s\n", st == MK_EUNSUPPORTED ? "MK_EUNSUPPORTED" : "other", mk_last_error());
            mk_demuxer_close(&dmx);
            return 3;
        }
        mk_demuxer_close(&dmx);
        return 0;
    }
    mk_status st;
    while ((st = mk_demuxer_read_packet(dmx, &pkt)) == MK_OK) {
        mk_packet_get_info(pkt, &info);
        /* As ffprobe: a zero duration prints as N/A. */
        char duration[32];
        if (info.duration == 0) snprintf(duration, sizeof duration, "N/A");
        else snprintf(duration, sizeof duration, "%" PRId64, info.duration);
        printf("%d,%" PRId64 ",%" PRId64 ",%s,%zu,%" PRId64 ",%s\n", info.track, info.pts, info.dts, duration,
               info.size, info.position, info.is_keyframe ? "K" : "_");
        mk_packet_free(&pkt);
    }
    mk_demuxer_close(&dmx);
    if (st != MK_EOF) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    return 0;
}
