// Playing a stored playlist: the queue becomes its entries (a scheduled alarm plays one).

import ReelModel

extension PlaylistStore {
    /// The queue becomes the playlist `name`'s entries and the first plays, as `player.play`
    /// (`PlayRequest.sources`): entries that name nothing now are left out (and stay in the
    /// file); none playable, or no such playlist, is an error naming why, and the queue stays as
    /// it was. Any thread; `reply` as `PlayerController.play`'s.
    public func play(_ name: String, reply: @escaping PlayerController.Reply) {
        queue.async { [self] in
            let source: Source
            do throws(ReelError) {
                source = try self.source(name, locating: true)
            } catch {
                return reply(.failure(error))
            }
            let run = self.additions(for: source, 0..<source.uris.count).run
            let additions = run.order.map { run.additions[$0] }
            guard !additions.isEmpty else {
                return reply(.failure(ReelError(.notFound, "the playlist \"\(name)\" has no entry that can be played")))
            }
            player.play(.sources(additions), reply: reply)
        }
    }
}
