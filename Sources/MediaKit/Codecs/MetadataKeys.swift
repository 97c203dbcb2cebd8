/// MediaKit's normalised tag keys and the generic names that map to them: the field names of
/// Vorbis comments (xiph.org "Ogg Vorbis I format specification: comment field and header
/// specification" and the de-facto ALBUMARTIST / TRACKTOTAL / MusicBrainz / ReplayGain names),
/// Matroska tags (matroska.org "Tags" names), APEv2 items (hydrogenaudio APE key list) and ID3
/// TXXX descriptions (MusicBrainz Picard's table). Matching ignores case.
enum MetadataKeys {
    /// Lower-cased generic name -> normalised key.
    static let aliases: [String: String] = {
        var m: [String: String] = [:]
        let table: [(String, [String])] = [
            ("title", ["title", "tit2"]),
            ("artist", ["artist", "author"]),
            ("album_artist", ["albumartist", "album_artist", "album artist"]),
            ("album", ["album"]),
            ("track", ["tracknumber", "track", "part_number"]),
            ("track_total", ["tracktotal", "totaltracks", "total_parts"]),
            ("disc", ["discnumber", "disc", "disk"]),
            ("disc_total", ["disctotal", "totaldiscs"]),
            ("date", ["date", "year", "date_released", "date_recorded"]),
            ("genre", ["genre"]),
            ("comment", ["comment", "description", "comments"]),
            ("composer", ["composer"]),
            ("lyrics", ["lyrics", "unsyncedlyrics"]),
            ("encoder", ["encoder", "encoding_tool", "encodingtool"]),
            ("encoded_by", ["encoded_by", "encodedby", "encoded-by"]),
            ("language", ["language"]),
            ("copyright", ["copyright"]),
            ("publisher", ["publisher", "label", "organization"]),
            ("performer", ["performer"]),
            ("isrc", ["isrc"]),
            ("compilation", ["compilation"]),
            ("musicbrainz_trackid", ["musicbrainz_trackid", "musicbrainz track id", "musicbrainz_recordingid"]),
            ("musicbrainz_albumid", ["musicbrainz_albumid", "musicbrainz album id"]),
            ("musicbrainz_artistid", ["musicbrainz_artistid", "musicbrainz artist id"]),
            ("musicbrainz_albumartistid", ["musicbrainz_albumartistid", "musicbrainz album artist id"]),
            ("musicbrainz_releasegroupid", ["musicbrainz_releasegroupid", "musicbrainz release group id"]),
            ("musicbrainz_releasetrackid", ["musicbrainz_releasetrackid", "musicbrainz release track id"]),
            ("musicbrainz_workid", ["musicbrainz_workid", "musicbrainz work id"]),
            ("replaygain_track_gain", ["replaygain_track_gain"]),
            ("replaygain_track_peak", ["replaygain_track_peak"]),
            ("replaygain_album_gain", ["replaygain_album_gain"]),
            ("replaygain_album_peak", ["replaygain_album_peak"]),
        ]
        for (key, names) in table { for n in names where !n.isEmpty { m[n] = key } }
        return m
    }()

    /// The normalised key of a generic tag name, or nil when it has none.
    static func normalised(_ name: String) -> String? { aliases[name.lowercased()] }

    /// The normalised key of a generic name, or the name itself, verbatim.
    static func key(_ name: String) -> String { normalised(name) ?? name }
}
