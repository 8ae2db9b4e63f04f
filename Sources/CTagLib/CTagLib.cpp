// TagLib's C++ API behind CTagLib.h. Reads (and reel_tags_write_chapters, which writes the file
// it is given, a copy the caller then puts in place): each reading call opens its file read-only (TagLib's
// FileRef(path) would open it read-write when it may, which a folder watcher sees as a write
// when the file is closed), reads, and lets everything go before it returns.

#include "CTagLib.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <taglib/aifffile.h>
#include <taglib/apefile.h>
#include <taglib/apetag.h>
#include <taglib/asffile.h>
#include <taglib/attachedpictureframe.h>
#include <taglib/fileref.h>
#include <taglib/flacfile.h>
#include <taglib/flacpicture.h>
#include <taglib/id3v2tag.h>
#include <taglib/itfile.h>
#include <taglib/modfile.h>
#include <taglib/mp4file.h>
#include <taglib/mpcfile.h>
#include <taglib/mpegfile.h>
#include <taglib/oggflacfile.h>
#include <taglib/opusfile.h>
#include <taglib/s3mfile.h>
#include <taglib/speexfile.h>
#include <taglib/tdebuglistener.h>
#include <taglib/tfilestream.h>
#include <taglib/tpropertymap.h>
#include <taglib/trueaudiofile.h>
#include <taglib/vorbisfile.h>
#include <taglib/wavfile.h>
#include <taglib/wavpackfile.h>
#include <taglib/xiphcomment.h>
#include <taglib/xmfile.h>

namespace {

using namespace TagLib;

/// A TagLib built without NDEBUG prints what it finds wrong in a file on stderr ("TagLib: ...");
/// Reel reports those files itself. (Debian's is built with NDEBUG: quiet already.)
class SilentListener : public DebugListener {
public:
    void printMessage(const String &) override {}
};

void silenceTagLib() {
    // Set once, before the first file is read (a function-local static's initialisation is
    // thread-safe).
    static const bool silenced = [] {
        static SilentListener listener;
        setDebugListener(&listener);
        return true;
    }();
    (void)silenced;
}

/// The codec as Reel names it (`AudioFormat.codec`).
const char *codecName(File *file) {
    if (dynamic_cast<FLAC::File *>(file) || dynamic_cast<Ogg::FLAC::File *>(file)) return "flac";
    if (dynamic_cast<MPEG::File *>(file)) return "mp3";
    if (dynamic_cast<Ogg::Vorbis::File *>(file)) return "vorbis";
    if (dynamic_cast<Ogg::Opus::File *>(file)) return "opus";
    if (dynamic_cast<RIFF::WAV::File *>(file)) return "wav";
    if (dynamic_cast<RIFF::AIFF::File *>(file)) return "aiff";
    if (auto *mp4 = dynamic_cast<MP4::File *>(file)) {
        auto *properties = mp4->audioProperties();
        if (properties && properties->codec() == MP4::Properties::AAC) return "aac";
        if (properties && properties->codec() == MP4::Properties::ALAC) return "alac";
        return "mp4";
    }
    if (dynamic_cast<Ogg::Speex::File *>(file)) return "speex";
    if (dynamic_cast<WavPack::File *>(file)) return "wavpack";
    if (dynamic_cast<MPC::File *>(file)) return "mpc";
    if (dynamic_cast<APE::File *>(file)) return "ape";
    if (dynamic_cast<TrueAudio::File *>(file)) return "tta";
    if (dynamic_cast<ASF::File *>(file)) return "wma";
    if (dynamic_cast<Mod::File *>(file) || dynamic_cast<S3M::File *>(file) || dynamic_cast<IT::File *>(file)
        || dynamic_cast<XM::File *>(file))
        return "mod";
    return "unknown";
}

char *copyString(const std::string &text) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (!copy) throw std::bad_alloc();
    std::memcpy(copy, text.data(), text.size());
    copy[text.size()] = 0;
    return copy;
}

/// The first of `keys` the map has a non-empty value for: its non-empty values joined by "; ";
/// NULL when none has.
char *tagValue(const PropertyMap &properties, std::initializer_list<const char *> keys) {
    for (const char *key : keys) {
        auto found = properties.find(key);
        if (found == properties.end()) continue;
        std::string joined;
        for (const String &value : found->second) {
            if (value.isEmpty()) continue;
            if (!joined.empty()) joined += "; ";
            joined += value.to8Bit(true);
        }
        if (!joined.empty()) return copyString(joined);
    }
    return nullptr;
}

/// The first non-empty value of `key` (compared without case) in `properties`; NULL when none.
char *valueIgnoringCase(const PropertyMap &properties, const char *key) {
    const String wanted = String(key).upper();
    for (const auto &entry : properties) {
        if (entry.first.upper() != wanted) continue;
        for (const String &value : entry.second) {
            if (!value.isEmpty()) return copyString(value.to8Bit(true));
        }
    }
    return nullptr;
}

/// An MP4 freeform atom's first value whose name (after `----:MEAN:`) is `key`, compared without
/// case (`----:com.apple.iTunes:replaygain_track_gain`, as foobar2000 and others write it).
char *mp4FreeformValue(MP4::File *file, const char *key) {
    MP4::Tag *tag = file->tag();
    if (!tag) return nullptr;
    const String wanted = String(key).upper();
    for (const auto &item : tag->itemMap()) {
        const String &name = item.first;
        if (!name.startsWith("----:")) continue;
        const int colon = name.rfind(":");
        if (colon < 0 || name.substr(colon + 1).upper() != wanted) continue;
        for (const String &value : item.second.toStringList()) {
            if (!value.isEmpty()) return copyString(value.to8Bit(true));
        }
    }
    return nullptr;
}

/// A ReplayGain tag's value wherever the file keeps it: its main tag's property map (Vorbis
/// comments, ID3v2 TXXX frames, APE items), an MP3's or WavPack's APE tag beside its ID3v2
/// tag, a FLAC file's ID3v2 tag, an MP4 file's freeform atoms.
char *gainTag(File *file, const PropertyMap &properties, const char *key) {
    if (char *found = valueIgnoringCase(properties, key)) return found;
    if (auto *mpeg = dynamic_cast<MPEG::File *>(file)) {
        if (mpeg->hasAPETag()) return valueIgnoringCase(mpeg->APETag()->properties(), key);
    } else if (auto *flac = dynamic_cast<FLAC::File *>(file)) {
        if (flac->hasID3v2Tag()) return valueIgnoringCase(flac->ID3v2Tag()->properties(), key);
    } else if (auto *mp4 = dynamic_cast<MP4::File *>(file)) {
        return mp4FreeformValue(mp4, key);
    }
    return nullptr;
}

struct Picture {
    bool frontCover;
    String mimeType;
    ByteVector data;
};

void addID3v2Pictures(ID3v2::Tag *tag, std::vector<Picture> &pictures) {
    if (!tag) return;
    for (ID3v2::Frame *frame : tag->frameList("APIC")) {
        auto *apic = dynamic_cast<ID3v2::AttachedPictureFrame *>(frame);
        // "-->" as the MIME type: the frame holds a link to the picture, not the picture.
        if (!apic || apic->picture().isEmpty() || apic->mimeType() == "-->") continue;
        pictures.push_back({apic->type() == ID3v2::AttachedPictureFrame::FrontCover, apic->mimeType(), apic->picture()});
    }
}

void addFLACPictures(const List<FLAC::Picture *> &list, std::vector<Picture> &pictures) {
    for (FLAC::Picture *picture : list) {
        if (!picture || picture->data().isEmpty()) continue;
        pictures.push_back({picture->type() == FLAC::Picture::FrontCover, picture->mimeType(), picture->data()});
    }
}

/// Every picture the file embeds where Reel looks: FLAC picture blocks (and pictures in its
/// Vorbis comment), METADATA_BLOCK_PICTURE of an Ogg file, ID3v2 APIC frames (MP3, WAV, AIFF,
/// FLAC), an MP4 file's covr atom. The data are shared, not copied.
std::vector<Picture> picturesOf(File *file) {
    std::vector<Picture> pictures;
    if (auto *flac = dynamic_cast<FLAC::File *>(file)) {
        addFLACPictures(flac->pictureList(), pictures);
        if (flac->hasXiphComment()) addFLACPictures(flac->xiphComment()->pictureList(), pictures);
        if (flac->hasID3v2Tag()) addID3v2Pictures(flac->ID3v2Tag(), pictures);
    } else if (auto *xiph = dynamic_cast<Ogg::XiphComment *>(file->tag())) {
        addFLACPictures(xiph->pictureList(), pictures);
    } else if (auto *mpeg = dynamic_cast<MPEG::File *>(file)) {
        if (mpeg->hasID3v2Tag()) addID3v2Pictures(mpeg->ID3v2Tag(), pictures);
    } else if (auto *wav = dynamic_cast<RIFF::WAV::File *>(file)) {
        if (wav->hasID3v2Tag()) addID3v2Pictures(wav->ID3v2Tag(), pictures);
    } else if (auto *aiff = dynamic_cast<RIFF::AIFF::File *>(file)) {
        if (aiff->hasID3v2Tag()) addID3v2Pictures(aiff->tag(), pictures);
    } else if (auto *mp4 = dynamic_cast<MP4::File *>(file)) {
        MP4::Tag *tag = mp4->tag();
        if (tag && tag->contains("covr")) {
            for (const MP4::CoverArt &art : tag->item("covr").toCoverArtList()) {
                if (art.data().isEmpty()) continue;
                const char *mime = "";
                switch (art.format()) {
                case MP4::CoverArt::JPEG: mime = "image/jpeg"; break;
                case MP4::CoverArt::PNG: mime = "image/png"; break;
                case MP4::CoverArt::BMP: mime = "image/bmp"; break;
                case MP4::CoverArt::GIF: mime = "image/gif"; break;
                default: break;
                }
                // covr says no picture type: the first is the cover.
                pictures.push_back({pictures.empty(), String(mime), art.data()});
            }
        }
    }
    return pictures;
}

/// The file, opened read-only, and TagLib's reading of it.
struct Opened {
    std::unique_ptr<FileStream> stream;
    FileRef ref;  // destroyed before `stream` (members go in reverse order)
};

bool hasAudio(File *file) {
    AudioProperties *audio = file->audioProperties();
    return file->isValid() && audio && audio->sampleRate() > 0 && audio->channels() > 0;
}

ReelTagsStatus noFileStatus(const char *path, const char **codec);

/// Opens `path` and has TagLib read it: the format from the name's extension, else from the
/// first bytes; when the format the name says finds no audio stream (TagLib's MP3 reader takes
/// any file for an MP3 file without frames), from the first bytes again (a FLAC file named
/// `.mp3`). `codec` is set as soon as a format is known.
ReelTagsStatus openAudio(const char *path, Opened &opened, const char **codec, int *errorNumber) {
    errno = 0;
    opened.stream.reset(new FileStream(path, true));
    if (!opened.stream->isOpen()) {
        *errorNumber = errno ? errno : EIO;
        return REEL_TAGS_OPEN_FAILED;
    }
    opened.ref = FileRef(opened.stream.get(), true, AudioProperties::Average);
    File *file = opened.ref.file();
    if (!file) return noFileStatus(path, codec);
    *codec = codecName(file);
    if (!file->isValid()) return REEL_TAGS_INVALID;
    if (hasAudio(file)) return REEL_TAGS_OK;

    // A stream opened from a descriptor has no name: FileRef goes by the content alone.
    const int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return REEL_TAGS_NO_AUDIO;
    std::unique_ptr<FileStream> stream(new FileStream(descriptor, true));
    if (!stream->isOpen()) {
        close(descriptor);
        return REEL_TAGS_NO_AUDIO;
    }
    FileRef byContent(stream.get(), true, AudioProperties::Average);
    if (!byContent.file() || !hasAudio(byContent.file())) return REEL_TAGS_NO_AUDIO;
    opened.ref = FileRef();
    opened.stream = std::move(stream);
    opened.ref = byContent;
    *codec = codecName(byContent.file());
    return REEL_TAGS_OK;
}

/// Why FileRef found no file: it drops a file it cannot read, of a format it knows by the name's
/// extension or not, and then tries every format by the file's first bytes. A name whose
/// extension TagLib knows is a broken file of that format (`codec` set from the extension);
/// any other, a format TagLib does not know.
ReelTagsStatus noFileStatus(const char *path, const char **codec) {
    String name(path, String::UTF8);
    const int slash = name.rfind("/");
    const int dot = name.rfind(".");
    if (dot == -1 || dot < slash) return REEL_TAGS_UNKNOWN_FORMAT;
    const String extension = name.substr(dot + 1).upper();
    bool known = false;
    for (const String &candidate : FileRef::defaultFileExtensions()) known = known || candidate.upper() == extension;
    if (!known) return REEL_TAGS_UNKNOWN_FORMAT;
    static const struct {
        const char *extension;
        const char *codec;
    } codecs[] = {
        {"MP3", "mp3"}, {"OGG", "vorbis"}, {"OGA", "vorbis"}, {"FLAC", "flac"}, {"OPUS", "opus"}, {"WAV", "wav"},
        {"AIF", "aiff"}, {"AIFF", "aiff"}, {"AIFC", "aiff"}, {"AFC", "aiff"}, {"M4A", "mp4"}, {"M4B", "mp4"},
        {"M4P", "mp4"}, {"M4R", "mp4"}, {"MP4", "mp4"}, {"3G2", "mp4"}, {"M4V", "mp4"}, {"SPX", "speex"},
        {"WV", "wavpack"}, {"MPC", "mpc"}, {"APE", "ape"}, {"TTA", "tta"}, {"WMA", "wma"}, {"ASF", "wma"},
    };
    *codec = "unknown";
    for (const auto &entry : codecs) {
        if (extension == entry.extension) *codec = entry.codec;
    }
    return REEL_TAGS_INVALID;
}

}  // namespace

extern "C" ReelTagsStatus reel_tags_read(const char *path, ReelTagsInfo *info) {
    std::memset(info, 0, sizeof *info);
    try {
        silenceTagLib();
        Opened opened;
        const ReelTagsStatus status = openAudio(path, opened, &info->codec, &info->error_number);
        if (status != REEL_TAGS_OK) return status;
        File *file = opened.ref.file();
        AudioProperties *audio = file->audioProperties();
        info->sample_rate = audio->sampleRate();
        info->channels = audio->channels();
        info->length_milliseconds = audio->lengthInMilliseconds() > 0 ? audio->lengthInMilliseconds() : 0;

        const PropertyMap properties = file->properties();
        info->title = tagValue(properties, {"TITLE"});
        info->artist = tagValue(properties, {"ARTIST"});
        info->album = tagValue(properties, {"ALBUM"});
        // "ALBUM ARTIST" and "ALBUM_ARTIST": as some taggers name it in Vorbis comments and APE.
        info->album_artist = tagValue(properties, {"ALBUMARTIST", "ALBUM ARTIST", "ALBUM_ARTIST"});
        info->track = tagValue(properties, {"TRACKNUMBER"});
        info->disc = tagValue(properties, {"DISCNUMBER"});
        info->date = tagValue(properties, {"DATE", "YEAR"});
        info->genre = tagValue(properties, {"GENRE"});
        info->has_picture = picturesOf(file).empty() ? 0 : 1;
        info->replaygain_track_gain = gainTag(file, properties, "REPLAYGAIN_TRACK_GAIN");
        info->replaygain_track_peak = gainTag(file, properties, "REPLAYGAIN_TRACK_PEAK");
        info->replaygain_album_gain = gainTag(file, properties, "REPLAYGAIN_ALBUM_GAIN");
        info->replaygain_album_peak = gainTag(file, properties, "REPLAYGAIN_ALBUM_PEAK");
        info->r128_track_gain = gainTag(file, properties, "R128_TRACK_GAIN");
        info->r128_album_gain = gainTag(file, properties, "R128_ALBUM_GAIN");
        return REEL_TAGS_OK;
    } catch (...) {
        return REEL_TAGS_FAILED;
    }
}

extern "C" void reel_tags_info_free(ReelTagsInfo *info) {
    for (char *text : {info->title, info->artist, info->album, info->album_artist, info->track, info->disc, info->date,
                       info->genre, info->replaygain_track_gain, info->replaygain_track_peak,
                       info->replaygain_album_gain, info->replaygain_album_peak, info->r128_track_gain,
                       info->r128_album_gain})
        std::free(text);
    std::memset(info, 0, sizeof *info);
}

extern "C" ReelTagsStatus reel_tags_picture(const char *path, ReelTagsPicture *picture) {
    std::memset(picture, 0, sizeof *picture);
    try {
        silenceTagLib();
        Opened opened;
        const ReelTagsStatus status = openAudio(path, opened, &picture->codec, &picture->error_number);
        if (status != REEL_TAGS_OK) return status;
        File *file = opened.ref.file();

        std::vector<Picture> pictures = picturesOf(file);
        if (pictures.empty()) return REEL_TAGS_OK;
        const Picture *chosen = &pictures.front();
        for (const Picture &candidate : pictures) {
            if (candidate.frontCover) {
                chosen = &candidate;
                break;
            }
        }
        picture->bytes = static_cast<unsigned char *>(std::malloc(chosen->data.size()));
        if (!picture->bytes) throw std::bad_alloc();
        std::memcpy(picture->bytes, chosen->data.data(), chosen->data.size());
        picture->count = chosen->data.size();
        picture->mime_type = copyString(chosen->mimeType.to8Bit(true));
        return REEL_TAGS_OK;
    } catch (...) {
        reel_tags_picture_free(picture);
        return REEL_TAGS_FAILED;
    }
}

extern "C" void reel_tags_picture_free(ReelTagsPicture *picture) {
    std::free(picture->bytes);
    std::free(picture->mime_type);
    std::memset(picture, 0, sizeof *picture);
}

namespace {

/// Replaces the chapter fields of `comment` (CHAPTERnnn, CHAPTERnnnNAME) with the given ones.
void setChapters(Ogg::XiphComment *comment, const char *const *times, const char *const *names, size_t count) {
    std::vector<String> stale;
    for (const auto &field : comment->fieldListMap()) {
        const std::string key = field.first.upper().to8Bit(true);
        if (key.size() >= 10 && key.compare(0, 7, "CHAPTER") == 0 && std::isdigit((unsigned char)key[7]) &&
            std::isdigit((unsigned char)key[8]) && std::isdigit((unsigned char)key[9]))
            stale.push_back(field.first);
    }
    for (const auto &key : stale) comment->removeFields(key);
    for (size_t index = 0; index < count; index++) {
        char key[32];
        snprintf(key, sizeof key, "CHAPTER%03zu", index + 1);
        comment->addField(key, String(times[index], String::UTF8), true);
        if (names && names[index] && names[index][0]) {
            snprintf(key, sizeof key, "CHAPTER%03zuNAME", index + 1);
            comment->addField(key, String(names[index], String::UTF8), true);
        }
    }
}

}  // namespace

extern "C" ReelTagsStatus reel_tags_write_chapters(
    const char *path, const char *const *times, const char *const *names, size_t count, int *error_number) {
    silenceTagLib();
    if (error_number) *error_number = 0;
    int probe = open(path, O_RDWR | O_CLOEXEC);
    if (probe < 0) {
        if (error_number) *error_number = errno;
        return REEL_TAGS_OPEN_FAILED;
    }
    close(probe);
    try {
        char header[4] = {0};
        {
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0 || read(fd, header, 4) != 4) {
                if (fd >= 0) close(fd);
                return REEL_TAGS_INVALID;
            }
            close(fd);
        }
        if (memcmp(header, "fLaC", 4) == 0) {
            FLAC::File file(path, false);
            if (!file.isValid()) return REEL_TAGS_INVALID;
            setChapters(file.xiphComment(true), times, names, count);
            return file.save() ? REEL_TAGS_OK : REEL_TAGS_INVALID;
        }
        if (memcmp(header, "OggS", 4) == 0) {
            {
                Ogg::Opus::File opus(path, false);
                if (opus.isValid() && opus.tag()) {
                    setChapters(opus.tag(), times, names, count);
                    return opus.save() ? REEL_TAGS_OK : REEL_TAGS_INVALID;
                }
            }
            Ogg::Vorbis::File vorbis(path, false);
            if (vorbis.isValid() && vorbis.tag()) {
                setChapters(vorbis.tag(), times, names, count);
                return vorbis.save() ? REEL_TAGS_OK : REEL_TAGS_INVALID;
            }
            return REEL_TAGS_INVALID;
        }
        return REEL_TAGS_UNKNOWN_FORMAT;
    } catch (...) {
        return REEL_TAGS_FAILED;
    }
}
