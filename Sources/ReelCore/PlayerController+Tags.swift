// Tags a client sets on a URL entry (MPD's `addtagid`/`cleartagid`, which upmpdcli uses to name
// what a stream plays), until the stream's own metadata replaces them.

import ReelModel

/// The tags a client may set on a URL entry.
public enum EntryTag: String, Sendable, CaseIterable {
    case title, name, artist, album
}

extension PlayerController {
    /// Adds `value` as the entry's `tag` (a tag holds one value: the last one set). Only URL
    /// entries take tags (`forbidden` for a file or a recording: their tags are their file's);
    /// `not_found` when there is no such entry. The stream's own station name and title, when
    /// it sends them, replace every tag set so (as MPD). Any thread; `saved` gets the summary
    /// once saved.
    public func addTag(_ tag: EntryTag, value: String, entry id: Int, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try editTags(of: id) { source, tags in
            guard case .url(let url, var name, var title) = source else { return }
            switch tag {
            case .title: title = value
            case .name: name = value
            case .artist: tags.artist = value
            case .album: tags.album = value
            }
            source = .url(url, name: name, title: title)
        }
        saves.after(saved)(summary)
    }

    /// Clears the entry's `tag`, or every tag when nil (the station's name and title too, until
    /// the stream sends them again). Rules as `addTag`.
    public func clearTag(_ tag: EntryTag?, entry id: Int, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try editTags(of: id) { source, tags in
            guard case .url(let url, var name, var title) = source else { return }
            switch tag {
            case nil:
                (name, title) = (nil, nil)
                tags = DisplayTags()
            case .title: title = nil
            case .name: name = nil
            case .artist: tags.artist = nil
            case .album: tags.album = nil
            }
            source = .url(url, name: name, title: title)
        }
        saves.after(saved)(summary)
    }

    private func editTags(of id: Int, _ edit: (inout PlayerSource, inout DisplayTags) -> Void) throws(ReelError) -> QueueSummary {
        let summary = try shared.withLock { shared throws(ReelError) -> QueueSummary in
            guard let entry = shared.queue.entry(id: id) else {
                throw ReelError(.notFound, "no queue entry with id \(id)")
            }
            guard case .url = entry.source else {
                throw ReelError(.forbidden, "cannot edit the tags of \(entry.source.displayName): only a URL entry's tags are edited")
            }
            var source = entry.source
            var tags = entry.tags ?? DisplayTags()
            edit(&source, &tags)
            shared.queue.updateSource(source, for: id)
            shared.queue.updateTags(tags.nonEmpty, for: id)
            publishQueue(shared)
            return shared.queue.summary
        }
        publishState()
        return summary
    }
}
