import XCTest
@testable import MediaKit

/// The tag mapping tables against the specifications' tables, and the model's FFmpeg view.
final class MetadataTests: XCTestCase {
    /// ID3v2.4 "4.2 Text information frames" (id3.org id3v2.4.0-frames) with the meaning each
    /// frame's description gives, and the v2.2 ids of the ID3v2.2 specification section 4.2.
    func testID3FrameIdsFollowTheSpecification() {
        let spec: [(v24: String, v22: String?, meaning: String)] = [
            ("TIT2", "TT2", "title"),            // Title/songname/content description
            ("TPE1", "TP1", "artist"),           // Lead performer(s)/Soloist(s)
            ("TPE2", "TP2", "album_artist"),     // Band/orchestra/accompaniment
            ("TPE3", "TP3", "performer"),        // Conductor/performer refinement
            ("TALB", "TAL", "album"),            // Album/Movie/Show title
            ("TRCK", "TRK", "track"),            // Track number/Position in set
            ("TPOS", "TPA", "disc"),             // Part of a set
            ("TCON", "TCO", "genre"),            // Content type
            ("TCOM", "TCM", "composer"),         // Composer
            ("TCOP", "TCR", "copyright"),        // Copyright message
            ("TSRC", "TRC", "isrc"),             // ISRC (international standard recording code)
            ("TSSE", "TSS", "encoder"),          // Software/Hardware and settings used for encoding
            ("TENC", "TEN", "encoded_by"),       // Encoded by
            ("TLAN", "TLA", "language"),         // Language(s)
            ("TPUB", "TPB", "publisher"),        // Publisher
            ("TDRC", nil, "date"),               // Recording time
            ("TYER", "TYE", "date"),             // Year (ID3v2.3)
            ("USLT", "ULT", "lyrics"),           // Unsynchronised lyric/text transcription
            ("COMM", "COM", "comment"),          // Comments
        ]
        for f in spec {
            XCTAssertEqual(ID3Metadata.normalised[f.v24], f.meaning, f.v24)
            if let v22 = f.v22 { XCTAssertEqual(ID3Metadata.normalised[v22], f.meaning, v22) }
        }
        // ID3v1 genres: appendix A of ID3v2.3 (0-79) and Winamp's extensions to 191.
        XCTAssertEqual(ID3Metadata.genres.count, 192)
        XCTAssertEqual(ID3Metadata.genres[0], "Blues")
        XCTAssertEqual(ID3Metadata.genres[17], "Rock")
        XCTAssertEqual(ID3Metadata.genres[79], "Hard Rock")
        XCTAssertEqual(ID3Metadata.genres[191], "Psybient")
    }

    /// The field names of the Vorbis comment specification ("Field names", xiph.org) and the
    /// de-facto ones (ALBUMARTIST, TRACKTOTAL, MusicBrainz, ReplayGain).
    func testVorbisCommentNamesFollowTheSpecification() {
        let spec = ["TITLE": "title", "ALBUM": "album", "TRACKNUMBER": "track", "ARTIST": "artist", "PERFORMER": "performer",
                    "COPYRIGHT": "copyright", "ORGANIZATION": "publisher", "DESCRIPTION": "comment", "GENRE": "genre",
                    "DATE": "date", "ISRC": "isrc", "ALBUMARTIST": "album_artist", "TRACKTOTAL": "track_total",
                    "DISCNUMBER": "disc", "MUSICBRAINZ_TRACKID": "musicbrainz_trackid", "REPLAYGAIN_TRACK_GAIN": "replaygain_track_gain"]
        for (name, key) in spec {
            XCTAssertEqual(MetadataKeys.normalised(name), key, name)
            XCTAssertEqual(MetadataKeys.normalised(name.lowercased()), key, name)
        }
        XCTAssertNil(MetadataKeys.normalised("VERSION"))
    }

    /// RIFF INFO ids of the Multimedia Programming Interface and Data Specifications 1.0
    /// ("INFO List Chunk"), with FFmpeg's names.
    func testRIFFInfoIdsFollowTheSpecification() {
        let spec = ["INAM": "title", "IART": "artist", "ICMT": "comment", "ICOP": "copyright", "ICRD": "date",
                    "IGNR": "genre", "IPRD": "album", "ISFT": "encoder", "ILNG": "language", "ITCH": "encoded_by"]
        for (id, key) in spec { XCTAssertEqual(ChunkMetadata.riffInfo[id], key, id) }
    }

    /// An ID3v2.3 tag built by hand: text frames, TXXX, COMM with a description, APIC, a CHAP
    /// with a TIT2 sub-frame, a numeric TCON, and TYER + TDAT making one date.
    func testID3TagBecomesTheModel() {
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
            Array(id.utf8) + [UInt8(body.count >> 24), UInt8((body.count >> 16) & 0xFF), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF), 0, 0] + body
        }
        func text(_ s: String) -> [UInt8] { [3] + Array(s.utf8) }
        let chap = Array("ch1".utf8) + [0] + [0, 0, 0, 0, 0, 0, 0x03, 0xE8] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + frame("TIT2", text("Intro"))
        let apic: [UInt8] = [0] + Array("image/png".utf8) + [0, 3] + Array("front".utf8) + [0, 0x89, 0x50, 0x4E, 0x47]
        var body = frame("TIT2", text("Song")) + frame("TPE1", text("Band")) + frame("TCON", text("(17)"))
        body += frame("TXXX", [3] + Array("MusicBrainz Album Id".utf8) + [0] + Array("abc".utf8))
        body += frame("COMM", [3] + Array("eng".utf8) + Array("note".utf8) + [0] + Array("hello".utf8))
        body += frame("TYER", text("2001")) + frame("TDAT", text("3112")) + frame("APIC", apic) + frame("CHAP", chap)
        let n = body.count
        let tag: [UInt8] = [0x49, 0x44, 0x33, 3, 0, 0, UInt8((n >> 21) & 0x7F), UInt8((n >> 14) & 0x7F), UInt8((n >> 7) & 0x7F), UInt8(n & 0x7F)] + body
        var r = ID3Metadata.Result()
        ID3Metadata.parseV2(tag, into: &r)
        XCTAssertEqual(r.metadata["title"], "Song")
        XCTAssertEqual(r.metadata["genre"], "Rock")
        XCTAssertEqual(r.metadata["musicbrainz_albumid"], "abc")
        XCTAssertEqual(r.metadata["comment"], "hello")
        let ff = Dictionary(r.metadata.ffmpegTags.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        XCTAssertEqual(ff, ["title": "Song", "artist": "Band", "genre": "Rock", "MusicBrainz Album Id": "abc", "note": "hello", "date": "2001-12-31"])
        XCTAssertEqual(r.attachments.map(\.mimeType), ["image/png"])
        XCTAssertEqual(r.attachments.first?.pictureType, 3)
        XCTAssertEqual(r.attachments.first?.description, "front")
        XCTAssertEqual(r.attachments.first?.data, [0x89, 0x50, 0x4E, 0x47])
        XCTAssertEqual(r.chapters.count, 1)
        XCTAssertEqual(r.chapters.first?.end, 1000)
        XCTAssertEqual(r.chapters.first?.timeBase, Rational(1, 1000))
        XCTAssertEqual(Dictionary(r.chapters[0].metadata.ffmpegTags.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }), ["title": "Intro"])
    }

    /// libavformat's dictionary: a key repeated in another case is one entry, merged by the rule.
    func testFFmpegViewMergesRepeatedKeys() {
        var m = Metadata(ffmpegMerge: .join(";"))
        m.append(key: "artist", nativeKey: "ARTIST", value: "A")
        m.append(key: "title", nativeKey: "TITLE", value: "T")
        m.append(key: "artist", nativeKey: "artist", value: "B")
        XCTAssertEqual(m.ffmpegTags.map(\.key), ["TITLE", "artist"])
        XCTAssertEqual(m.ffmpegTags.map(\.value), ["T", "A;B"])
        m.ffmpegMerge = .keepFirst
        XCTAssertEqual(m.ffmpegTags.map(\.value), ["A", "T"])
        m.ffmpegMerge = .replace
        XCTAssertEqual(m.ffmpegTags.map(\.value), ["T", "B"])
        XCTAssertEqual(m.values(for: "ARTIST"), ["A", "B"])
    }

    /// OGM chapters: an end not stated is the next start, then the duration.
    func testChapterEndsAreFilledAsFFmpegFillsThem() {
        let body: [UInt8] = {
            let fields = ["CHAPTER001=00:00:00.000", "CHAPTER001NAME=One", "CHAPTER002=00:00:01.500", "CHAPTER002NAME=Two", "TITLE=x"]
            func le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), 0, 0] }
            return le(0) + le(fields.count) + fields.flatMap { le($0.utf8.count) + Array($0.utf8) }
        }()
        var chapters = VorbisComment.metadata(body).chapters
        Chapter.fillEnds(&chapters, duration: 3)
        XCTAssertEqual(chapters.map(\.start), [0, 1500])
        XCTAssertEqual(chapters.map(\.end), [1500, 3000])
        XCTAssertEqual(chapters.map(\.title), ["One", "Two"])
        XCTAssertEqual(VorbisComment.metadata(body).metadata.map(\.nativeKey), ["TITLE"])
    }
}
