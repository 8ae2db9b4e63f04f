// The `/Music` branch inside the store's reads, and the rule that nothing in it changes.

import ReelModel

extension LibraryStore {
    /// Shows the music folders (as configured) as the `/Music` branch of the tree; an empty list
    /// takes it away. Called once by the core at start.
    public func showMusicFolders(_ folders: [String]) {
        branch.withLock { $0 = folders.isEmpty ? nil : MusicBranch(musicFolders: folders) }
    }

    /// The branch, or nil without music folders.
    public var musicBranch: MusicBranch? { branch.withLock { $0 } }

    /// `read_only` for a reference into the branch (with music folders): what every change of
    /// the tree checks first, for the item it changes and the folder it puts something in.
    func refuseMusicBranch(_ reference: ItemReference) throws(ReelError) {
        guard musicBranch != nil, MusicBranch.contains(reference) else { return }
        throw ReelError(
            .readOnly,
            "\(reference) is in the music folders (\(MusicBranch.path)), which reeld only reads: change them on disk")
    }

    /// `name_taken` for the branch's name at the root (with music folders).
    func refuseBranchName(_ name: String, parentID: String) throws(ReelError) {
        guard musicBranch != nil, parentID == LibrarySchema.rootID, name == MusicBranch.name else { return }
        throw ReelError(.nameTaken, "\(MusicBranch.path) is the music folders' branch; choose another name")
    }

    // MARK: Reads

    /// The item a branch reference names; nil for a reference outside the branch.
    func branchItem(_ reference: ItemReference) throws(ReelError) -> Item? {
        guard let branch = musicBranch, MusicBranch.contains(reference) else { return nil }
        let index = MusicIndex(store: self)
        switch reference {
        case .id(let id):
            if let number = MusicBranch.trackID(of: id) {
                let gone = ReelError(.notFound, "no item with id \(id); it may have been deleted, or its disk is not there")
                let track: MusicTrack
                do {
                    track = try index.track(id: number)
                } catch where error.reason == .notFound {
                    throw gone
                }
                // A file of a music folder that is not there now is not in the tree (as in listings).
                guard !track.missing, let item = branch.trackItem(track) else { throw gone }
                return item
            }
            guard let sub = MusicBranch.subPath(ofFolderID: id) else {
                throw ReelError(.notFound, "no item with id \(id); it may have been deleted")
            }
            return try branchItem(subPath: sub, branch, index, named: id)
        case .path(let path):
            _ = try ItemName.components(ofPath: path)
            return try branchItem(subPath: MusicBranch.subPath(ofTreePath: path) ?? "", branch, index, named: path)
        }
    }

    /// The folder or track at a path under `/Music`.
    private func branchItem(subPath sub: String, _ branch: MusicBranch, _ index: MusicIndex, named: String)
        throws(ReelError) -> Item
    {
        switch branch.place(ofSubPath: sub) {
        case nil:
            throw ReelError(.notFound, "no item at \(named)")
        case .branch:
            return branch.folderItem(subPath: sub)
        case .inFolder(let root, let relative):
            if relative.isEmpty { return branch.folderItem(subPath: sub) }
            if let track = try index.track(root: root.folder, relativePath: relative), !track.missing,
                let item = branch.trackItem(track)
            {
                return item
            }
            if MusicPlaylistFile.isPlaylistName(relative),
                let file = try index.playlist(root: root.folder, relativePath: relative), !file.missing,
                let item = branch.playlistItem(file)
            {
                return item
            }
            guard try index.hasFolder(root: root.folder, relative) else {
                throw ReelError(.notFound, "no item at \(named)")
            }
            return branch.folderItem(subPath: sub)
        }
    }

    /// A branch folder and what is directly in it (folders, then tracks, then playlist files,
    /// each by name under the tree's order); nil for a reference outside the branch.
    func branchListing(_ reference: ItemReference) throws(ReelError) -> (folder: Item, items: [Item])? {
        guard let branch = musicBranch, let folder = try branchItem(reference) else { return nil }
        guard folder.kind == .folder else {
            throw ReelError(.notAFolder, "cannot list \(folder.path): it is a \(folder.kind.rawValue), not a folder")
        }
        let sub = MusicBranch.subPath(ofTreePath: folder.path) ?? ""
        var folders: [Item] = []
        var tracks: [Item] = []
        var playlists: [Item] = []
        switch branch.place(ofSubPath: sub) {
        case .branch:
            folders = branch.roots.map { branch.folderItem(subPath: $0.name) }
        case .inFolder(let root, let relative):
            let index = MusicIndex(store: self)
            folders = try index.subfolders(root: root.folder, of: relative).map { folder in
                branch.folderItem(subPath: sub.isEmpty ? folder.name : sub + "/" + folder.name, modified: folder.modified)
            }
            tracks = try index.files(root: root.folder, in: relative).compactMap(branch.trackItem)
            playlists = try index.playlists(root: root.folder, in: relative).compactMap(branch.playlistItem)
        case nil:
            break
        }
        return (folder, Self.treeOrder(folders) + Self.treeOrder(tracks) + Self.treeOrder(playlists))
    }

    /// By name ignoring case, then byte for byte (the tree's order).
    static func treeOrder(_ items: [Item]) -> [Item] {
        items.map { (LibrarySchema.fold($0.name), $0) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1.name < $1.1.name }.map(\.1)
    }

    /// The root's items with the branch among its folders (with music folders).
    func withBranch(rootItems items: [Item]) -> [Item] {
        guard let branch = musicBranch else { return items }
        let music = branch.folderItem(subPath: "")
        let folders = items.filter { $0.kind == .folder } + [music]
        return Self.treeOrder(folders) + items.filter { $0.kind != .folder }
    }
}
