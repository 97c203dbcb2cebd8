/*
 * read_packets.c — reads every packet of a file through the C API and prints
 * "N packets, B bytes", as `mk-probe --count` does from Swift (the C-ABI benchmark).
 */
#include <mediakit/mediakit.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s FILE\n", argv[0]); return 2; }
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    mk_packet *pkt = NULL;
    mk_packet_info info;
    info.struct_size = sizeof info;
    long n = 0, bytes = 0;
    mk_status st;
    while ((st = mk_demuxer_read_packet(dmx, &pkt)) == MK_OK) {
        mk_packet_get_info(pkt, &info);
        n++;
        bytes += (long)info.size;
        mk_packet_free(&pkt);
    }
    mk_demuxer_close(&dmx);
    if (st != MK_EOF) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    printf("%ld packets, %ld bytes\n", n, bytes);
    return 0;
}
