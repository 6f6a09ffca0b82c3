import Foundation
import Testing
import TestSupport

/// Slips a careful user makes on the command line get an answer that says
/// what was meant (session 27, cli13): a bare word read as a URL, a URL
/// given to `-i`, flags bundled before an option whose value starts with
/// `-` (more curl/wget/aria2c habits: `CommandLineHabitsE2ETests`).
@Suite struct CommandLineHintsE2ETests {
    let cli: CLI

    init() throws { cli = try CLI() }

    /// `asyncfetch version` was only "failure version invalid URL: expected
    /// scheme://host/path". It is still that failure (SPEC §3: the batch goes
    /// on, exit 1), with a hint on stderr.
    @Test func aBareWordReadAsAURLGetsAHintAndTheBatchGoesOn() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let list = try cli.cache.write("urls.txt", Array("\(url)\n".utf8))
        let cases: [(String, String)] = [
            ("version", "asyncfetch: 'version' is not a URL: did you mean '--version'?"),
            ("verison", "asyncfetch: 'verison' is not a URL: did you mean '--version'?"),
            ("offline", "asyncfetch: 'offline' is not a URL: did you mean '--offline'?"),
            ("list", "asyncfetch: 'list' is not a URL: did you mean 'asyncfetch cache list'?"),
            ("cahce", "asyncfetch: 'cahce' is not a URL: did you mean 'asyncfetch cache …'?"),
            (list, "asyncfetch: '\(list)' is a file, not a URL: to fetch the URLs listed in it, use -i \(list)"),
            ("example.com/cat.png", "asyncfetch: 'example.com/cat.png' has no scheme: write https://example.com/cat.png or http://example.com/cat.png"),
        ]
        for (word, hint) in cases {
            let result = try cli.run([word, url])
            #expect(result.status == 1, "\(word): \(result.stderr)")
            #expect(result.stdout.contains("failure  \(word)  invalid URL"), "\(word): \(result.stdout)")
            #expect(result.stdout.contains("success  \(url)"), "the batch goes on: \(result.stdout)")
            #expect(result.stderr.hasPrefix(hint), "\(word): \(result.stderr)")
            // --json: the same hint on stderr, stdout only JSON.
            let json = try cli.run(["--json", word])
            #expect(json.status == 1 && json.stderr.hasPrefix(hint), "\(word): \(json.stderr)")
            #expect(json.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("{") }, "\(json.stdout)")
        }
        // A local file that is no list (an image) is not sent to -i, and a file name that names
        // nothing here is not sent to https:// (both were, from the first version of these hints).
        let image = try cli.cache.write("cat.png", Array(FixtureSite.png))
        let missing = ["nothing.txt", "photo.jpg", "README.md"].map { cli.cache.path + "/" + $0 } + ["photos/cat.png"]
        let fileCases: [(String, String)] = [(image, "asyncfetch: '\(image)' is a local file, not a URL: asyncfetch fetches http:// and https:// URLs")]
            + missing.map { ($0, "asyncfetch: '\($0)' is not a URL, and there is no file of that name here (a list of URLs is read with -i FILE)") }
        for (word, hint) in fileCases {
            let result = try cli.run([word, url])
            #expect(result.status == 1 && result.stdout.contains("success  \(url)"), "\(word): \(result.stdout)")
            #expect(result.stderr.hasPrefix(hint + "\n"), "\(word): \(result.stderr)")
        }
        let bare = try cli.run(["urls.txt"])
        #expect(bare.stderr.hasPrefix("asyncfetch: 'urls.txt' is not a URL, and there is no file of that name here"), "\(bare.stderr)")
        // A word that is nothing in particular, and a line of a list, get none.
        #expect(try cli.run(["nothing-like-it"]).stderr.isEmpty)
        let listed = try cli.cache.write("words.txt", Array("version\n".utf8))
        #expect(try cli.run(["-i", listed]).stderr.isEmpty)
        // `cahce list` is one slip: one hint for both words (it was two, `cache …` then `cache list`);
        // so is `cache list` after a URL (it was `--cache-dir`, then `cache list`).
        for words in [["cahce", "list"], ["cache", "list"]] {
            let twoWords = try cli.run(words.first == "cache" ? [url] + words : words + [url])
            #expect(twoWords.status == 1 && twoWords.stdout.contains("success  \(url)"), "\(twoWords.stdout)")
            #expect(twoWords.stdout.contains("failure  \(words[0])  invalid URL") && twoWords.stdout.contains("failure  list  invalid URL"))
            let hint = "asyncfetch: '\(words[0]) list' are not URLs: did you mean 'asyncfetch cache list'?\n"
            #expect(twoWords.stderr.hasPrefix(hint) && twoWords.stderr.components(separatedBy: "not a URL").count == 1, "\(twoWords.stderr)")
        }
        // `cache` alone after a URL is the command's word out of place, as `cahce` is (it was told
        // "did you mean '--cache-dir'?", an option that wants a directory nobody named).
        let cacheWord = try cli.run([url, "Cache"])
        #expect(cacheWord.status == 1 && cacheWord.stdout.contains("success  \(url)")
                && cacheWord.stdout.contains("failure  Cache  invalid URL"), "\(cacheWord.stdout)")
        #expect(cacheWord.stderr.hasPrefix("asyncfetch: 'Cache' is not a URL: did you mean 'asyncfetch cache …'?\n")
                && cacheWord.stderr.components(separatedBy: "not a URL").count == 2, "\(cacheWord.stderr)")
        let dashed = try cli.run([url, "--", "--cache"])
        #expect(dashed.stderr.hasPrefix("asyncfetch: '--cache' is not a URL: did you mean '--cache-dir'?\n"), "\(dashed.stderr)")
        // A few at most.
        let many = try cli.run((1...10).map { "host\($0).example/x.png" })
        #expect(many.stderr.split(separator: "\n").filter { $0.contains("has no scheme") }.count == 3, "\(many.stderr)")
    }

    /// The hints are written after SIGPIPE is ignored: with standard error a
    /// pipe nobody reads (a supervisor whose log reader died), `asyncfetch
    /// version URL` still fetches URL and exits 1. It died of SIGPIPE before
    /// any URL (exit 141, nothing on stdout).
    @Test func aHintToAStandardErrorNobodyReadsDoesNotStopTheRun() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let parent = """
            import os, subprocess, sys
            r, w = os.pipe()
            os.close(r)
            child = subprocess.run(sys.argv[1:], stderr=w, stdout=subprocess.PIPE)
            sys.stdout.buffer.write(child.stdout)
            sys.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)
            """
        let result = try runProcess("/usr/bin/python3", ["-c", parent, CLI.binary, "version", url],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        #expect(result.status == 1, "not killed by SIGPIPE (141): \(result.status) \(result.stderr)")
        #expect(result.stdout.contains("failure  version  invalid URL"), "\(result.stdout)")
        #expect(result.stdout.contains("success  \(url)"), "the batch goes on: \(result.stdout)")
    }

    /// `-qo -x.png` said "Unknown option '-qo'"; it gets the answer `-o -x.png`
    /// gets. `-qo FILE` and `-qoFILE` work as getopt reads them.
    @Test func flagsBundledBeforeAnOptionAreReadAsGetoptReadsThem() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let dir = cli.cache.path
        for (arguments, reason) in [(["-qo", "-x.png", url], "Missing value for '-o <file>'; a value that starts with '-' is written --output=-x.png"),
                                    (["-vqi", "-list.txt"], "Missing value for '-i <file>'; a value that starts with '-' is written --input=-list.txt"),
                                    ([url, "-qo"], "Missing value for '-o <file>'")] {
            let result = try cli.run(arguments)
            #expect(result.status == 2 && result.stderr.hasPrefix("asyncfetch: \(reason)\n"), "\(arguments): \(result.stderr)")
        }
        let spaced = try cli.run(["-qo", dir + "/a.png", url])
        #expect(spaced.status == 0 && spaced.stdout.isEmpty && FileManager.default.fileExists(atPath: dir + "/a.png"), "\(spaced.stderr)")
        let joined = try cli.run(["-qo\(dir)/b.png", url])
        #expect(joined.status == 0 && FileManager.default.fileExists(atPath: dir + "/b.png"), "\(joined.stderr)")
        // A value after the bundle stays whole: `-qo -ofoo` is not split into `-o foo`.
        #expect(try cli.run(["-qo", "-ofoo", url]).stderr.contains("written --output=-ofoo"))
    }

    /// curl's `-i URL` (--include) said "cannot read -i https://…: No such file or directory".
    @Test func aURLGivenToInputSaysWhatInputTakes() throws {
        for arguments in [["-i", "https://example.com/cat.png"], ["--input=https://example.com/cat.png"],
                          ["-qi", "https://example.com/cat.png"], ["cache", "path", "-i", "https://example.com/cat.png"],
                          ["cache", "rm", "--input=https://example.com/cat.png"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(": -i reads a list of URLs from a file; name a URL as an argument itself"),
                    "\(arguments): \(result.stderr)")
            // curl's --include is a fetch run's habit: a cache command has no -v to use instead.
            #expect(result.stderr.contains("(curl's -i, --include: use -v or --json") == (arguments.first != "cache"),
                    "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }

    /// wget's `-o LOGFILE` is a log of the run; asyncfetch's `-o FILE` is
    /// curl's (the body). A `.log` name gets the body as asked, and a line
    /// that says how to get a log; with a list it is refused as any `-o` is,
    /// with the same words.
    @Test func wgetsLogFileIsToldItIsARedirection() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let log = cli.cache.path + "/run.log"
        let result = try cli.run(["-o", log, url])
        #expect(result.status == 0 && result.stdout.contains("success  \(url)"), "\(result.stdout)")
        #expect(FileManager.default.contents(atPath: log).map { Array($0) } == Array(FixtureSite.png), "the body, as asked")
        #expect(result.stderr == "asyncfetch: -o \(log): the body goes to that file, as with curl's -o; "
                + "wget's -o LOGFILE, a log of the run, is a redirection here: > \(log) 2>&1\n", "\(result.stderr)")
        let list = try cli.cache.write("urls.txt", Array("\(url)\n".utf8))
        let refused = try cli.run(["-o", "RUN.LOG", "-i", list])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("asyncfetch: -o/--output takes exactly one URL, named on the command line "
                + "(wget's -o LOGFILE, a log of the run, is a redirection here: > RUN.LOG 2>&1)\n"), "\(refused.stderr)")
        // Any other name gets no such line; nor does -q (only failures are printed), nor a -o that is refused.
        #expect(try cli.run(["-o", cli.cache.path + "/cat.png", url]).stderr.isEmpty)
        let quiet = try cli.run(["-q", "-o", log, url])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stderr)")
        let inCache = try cli.run(["-o", cli.cacheDir + "/x.log", url])
        #expect(inCache.status == 2 && !inCache.stderr.contains("the body goes to that file"), "\(inCache.stderr)")
    }
}
