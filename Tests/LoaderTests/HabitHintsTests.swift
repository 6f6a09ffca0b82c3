@testable import Loader
import Testing

/// The answers to curl's, wget's and aria2c's habitual options (`HabitHints`),
/// as data: each name answered once, and wget's `-o LOGFILE` told apart
/// from a body's file by its name. The end-to-end tests check that the tool
/// gives every answer of docs/habits.md and takes no asyncfetch option for a habit.
@Suite struct HabitHintsTests {
    /// A name in two rows would be answered by whichever the table took last.
    @Test func eachNameIsAnsweredOnceAndIsAnOption() {
        var seen: [String: Int] = [:]
        for (names, answer) in HabitHints.rows {
            #expect(!names.isEmpty && !answer.isEmpty)
            for name in names { seen[name, default: 0] += 1 }
        }
        #expect(seen.filter { $0.value > 1 }.isEmpty, "\(seen.filter { $0.value > 1 })")
        #expect(seen.keys.allSatisfy { $0.hasPrefix("-") && $0.count > 1 && !$0.contains(" ") })
        #expect(HabitHints.answers.count == seen.count)
    }

    @Test func anAnswerNamesTheOptionAsTyped() {
        #expect(HabitHints.answer(for: "--fail") == "--fail: always on: an HTTP 4xx/5xx is a failure and the exit status is 1")
        #expect(HabitHints.answer(for: "-k")?.hasPrefix("-k: curl's -k (--insecure): use --insecure") == true)
        #expect(HabitHints.answer(for: "--insecure") == nil, "an asyncfetch option is no habit")
        #expect(HabitHints.answer(for: "--FAIL") == nil, "options are typed in their case")
    }

    /// wget's `-o LOGFILE`: a name made of the word `log` (or `logs`,
    /// `logfile`) gets the line, whatever else it holds, unless it is an
    /// image's name; a word that only holds the letters does not.
    @Test func aLogIsToldByTheWordsOfItsName() {
        for name in ["run.log", "RUN.LOG", "/var/tmp/fetch.log", "run.log.1", "log.txt", "log", "wget-log", "wget-log.2",
                     "fetch_log.txt", "logs.txt", "logfile", "out/LOGFILE.TXT", "my.logs"] {
            #expect(HabitHints.logFile(output: name) == "wget's -o LOGFILE, a log of the run, is a redirection here: > \(name) 2>&1",
                    "\(name)")
        }
        for name in ["cat.png", "catalog.txt", "blog", "logo.png", "login.html", "log.png", "log.JPG", "wget-log.webp",
                     "log/cat.png", "-", "logging.txt", ""] {
            #expect(HabitHints.logFile(output: name) == nil, "\(name)")
        }
        #expect(HabitHints.logFile(output: nil) == nil)
    }
}
