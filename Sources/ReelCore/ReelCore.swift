// The core every front end drives: the player, the recorder and the library, with their rules.

import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelTags

/// What a front end calls. Plain Swift values and `ReelError`s in; values, errors and change
/// feeds out; no protocol, no socket. Every rule (media roots, validation of values, limits,
/// what a recording may be) is enforced here, so that no front end can skip one.
///
/// - `player`: commands and `player.changes` (a `StateFeed<PlayerState>`);
/// - `recorder`: commands and `recorder.changes` (a `StateFeed<RecorderState>`);
/// - `player` also holds the play queue (`player.queueChanges`);
/// - `mixer`: the volume, and `mixer.changes`;
/// - `outputs`: the ALSA device and pipe outputs, on and off, and `outputs.changes`;
/// - `music`: the music folders' index (artists, albums, tracks, search) and its scan's progress;
/// - `library`: reads (off the caller's thread), writes, folder and item watches, and
///   `library.updates` (an `EventFeed<LibraryUpdate>`, one per committed transaction);
/// - `feeds`: every change feed by name (`CoreFeed`), the one list front ends loop over.
///
/// A front end takes from the feeds on its own thread (see `StateFeed`), encodes each change
/// once and writes it to its subscribers. Threads: every method may be called from any thread
/// and returns without blocking on I/O; results that take time come through a reply closure
/// called on a core thread.
public final class ReelCore: Sendable {
    public let player: PlayerController
    public let recorder: RecorderController
    public let library: LibraryController
    public let mixer: MixerController
    public let outputs: OutputsController
    public let music: MusicController
    public let schedules: ScheduleController
    /// The stored playlists (`playlist_dir`).
    public let playlists: PlaylistStore
    public let mediaRoots: MediaRoots
    /// Every change feed above, by `CoreFeed`: what front ends loop over.
    public let feeds: CoreFeeds
    private let stateFile: PlayerStateFile
    /// What was saved at the last shutdown, restored by `start`.
    private let saved: (SavedPlayerState, SavedQueue)?
    private let logger: Logger

    /// How the player comes back after a restart.
    public enum Resume: String, Sendable, CaseIterable {
        case paused, playing, no
    }

    /// Opens the library in `dataDirectory` (repairing what a crash left) and sets up the player
    /// and the recorder on the given devices. Throws a `ReelError` when the data directory cannot
    /// be used.
    public init(
        dataDirectory: String, output: PCMOutput, timing: PCMTiming, input: PCMInput, captureTiming: PCMTiming,
        recording: RecordingDefaults, mediaRoots: [String], musicDirectories: [String] = [],
        mixer mixerSettings: MixerSettings = MixerSettings(),
        outputs outputConfiguration: [OutputConfiguration] = [], streams: StreamConfiguration = StreamConfiguration(),
        playlistDirectory: String? = nil, recordingsDirectory: String = "Recordings",
        logger: Logger
    ) throws(ReelError) {
        self.logger = logger
        self.mediaRoots = MediaRoots(mediaRoots, musicDirectories: musicDirectories)
        var libraryLogger = logger
        libraryLogger[metadataKey: "subsystem"] = "reel.library"
        let store = try LibraryStore(directory: dataDirectory, logger: libraryLogger)
        // A take's chapters cut short while written in place: finished (the new chapters)
        // or dropped (the old), before the reconcile removes what is left at those paths.
        let name = LibraryStore.chaptersCopyName
        let journals = FLACCommentsInPlace.finishInterrupted(inDirectory: store.audioDirectory, prefix: name.prefix, suffix: name.suffix)
        for journal in journals.finished {
            libraryLogger.notice("finished writing a recording's chapters, cut short by a crash", metadata: ["journal": "\(journal)"])
        }
        for (journal, error) in journals.failed {
            // Kept for the next start: it holds the only whole copy of that file's header.
            libraryLogger.error(
                "could not finish writing a recording's chapters; its journal is kept",
                metadata: ["journal": "\(journal)", "error": "\(error.message)"])
        }
        let report = try store.reconcile(keeping: Set(journals.failed.map(\.name)))
        if !report.isClean {
            libraryLogger.notice(
                "library reconciled",
                metadata: [
                    "strayFiles": "\(report.strayFiles.count)", "missingRecordings": "\(report.missingRecordings.count)",
                    "partialImports": "\(report.partialImports.count)",
                    "restoredRecordings": "\(report.restoredRecordings.count)",
                    "resizedRecordings": "\(report.resizedRecordings.count)",
                ])
        }
        var audioLogger = logger
        audioLogger[metadataKey: "subsystem"] = "reel.audio"
        outputs = OutputsController(configuration: outputConfiguration, device: output.name, logger: audioLogger)
        player = PlayerController(
            device: outputs.makeOutputSet(device: output), timing: timing, store: store, mediaRoots: self.mediaRoots, logger: audioLogger,
            streamConfiguration: streams)
        outputs.attach(player.engine)
        outputs.saves = player.saves
        var recorderLogger = logger
        recorderLogger[metadataKey: "subsystem"] = "reel.recorder"
        recorder = RecorderController(
            device: input, timing: captureTiming, store: store, defaults: recording, logger: recorderLogger)
        let feed = player.changes
        recorder.sources = RecordingSources(
            playerTap: player.engine.tap,
            playing: {
                let state = feed.latest.value
                var title: String?
                if case .url(_, _, let onAir) = state.source { title = onAir }
                return (state.format, title)
            },
            streams: streams)
        recorder.repairUnfinished()
        recorder.listenForPreroll()
        player.writeChapters = { [recorder] recording, done in recorder.writeChapters(ofRecording: recording, done: done) }
        var musicLogger = logger
        musicLogger[metadataKey: "subsystem"] = "reel.music"
        music = MusicController(
            store: store, roots: musicDirectories, reader: MusicController.readPlayable,
            logger: musicLogger, onMoves: { [player] moves in player.followMoves(moves) })
        library = LibraryController(
            store: store, player: player, recorder: recorder, mediaRoots: self.mediaRoots, logger: libraryLogger)
        store.showMusicFolders(music.indexedRoots)
        library.followMusic(music.progress)
        stateFile = PlayerStateFile(directory: dataDirectory, player: player, logger: audioLogger)
        saved = stateFile.load()
        let savedVolume = saved.map { (volume: $0.0.volume, muted: $0.0.muted) }
        mixer = MixerController(
            settings: mixerSettings, playbackDevice: output.name, player: player, saved: savedVolume,
            savedReplayGain: saved?.0.replayGain, logger: audioLogger)
        let mixer = self.mixer
        stateFile.mixerState = { mixer.saved }
        let outputs = self.outputs
        stateFile.outputsState = { outputs.saved }
        stateFile.follow(mixer.changes)
        stateFile.follow(outputs.changes)
        var playlistLogger = logger
        playlistLogger[metadataKey: "subsystem"] = "reel.playlists"
        playlists = PlaylistStore(
            directory: playlistDirectory ?? dataDirectory + "/playlists",
            paths: PlaylistPaths(recordingsDirectory: recordingsDirectory, musicRoots: music.roots),
            store: store, player: player, musicProgress: music.progress, logger: playlistLogger)
        playlists.follow(library.updates)
        let playlistStore = playlists
        player.playlistFileAdditions.withLock {
            $0 = { [weak playlistStore] item throws(ReelError) in
                guard let playlistStore else { throw ReelError(.notFound, "the playlists are closed") }
                return try playlistStore.additions(ofPlaylistItem: item)
            }
        }
        var scheduleLogger = logger
        scheduleLogger[metadataKey: "subsystem"] = "reel.schedules"
        schedules = ScheduleController(
            storage: LibraryScheduleStorage(store: store), clock: WallClockTimer(), zone: SystemTimeZone(),
            performer: ScheduleActions(player: player, mixer: mixer, recorder: recorder, playlists: playlists), logger: scheduleLogger)
        feeds = CoreFeeds(
            player: player, recorder: recorder, library: library, mixer: mixer, outputs: outputs, music: music,
            schedules: schedules, playlists: playlists)
    }

    /// Restores the saved queue and player (as `resume` says) and starts saving their state: from
    /// now on a command's reply waits until the state it left is saved (`SaveBarrier`).
    public func start(resume: Resume) {
        if let (state, queue) = saved {
            outputs.restore(state.outputs)
            player.restore(state, queue: queue, load: resume != .no, playing: resume == .playing)
        }
        stateFile.start()
        music.start()
        schedules.start()
    }

    /// Finishes a recording, saves the player's state, stops the player and closes the devices;
    /// last, empties the library database's write-ahead log into it.
    public func shutdown() {
        schedules.shutdown()
        music.shutdown()
        recorder.shutdown()
        stateFile.finish()
        mixer.shutdown()
        player.shutdown()
        library.store.checkpoint()
    }
}
