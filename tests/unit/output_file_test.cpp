// Output files (core/output_path, atomic_file, output_check, jsonl_file, file_rewriter): what each kind
// of path gets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/file_rewriter.hpp"
#include "core/jsonl_file.hpp"
#include "core/output_check.hpp"
#include "core/output_path.hpp"
#include "input_error_matcher.hpp"

namespace commscale {
namespace {

namespace fs = std::filesystem;
using testing::throws_input_error;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("commscale-output-{}-{}", ::getpid(), counter_++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] std::string at(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  static inline int counter_ = 0;
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

mode_t mode_of(const std::string& path) {
  struct stat st{};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode;
}

// Entries of the directory other than those named: a temporary file left behind would show here.
std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST_F(OutputFile, RegularFileIsReplacedWithNothingLeftBeside) {
  write_file_atomically(at("a.json"), "old");
  write_file_atomically(at("a.json"), "new");
  EXPECT_EQ(read(at("a.json")), "new");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(OutputFile, LongestFileNameWorks) {
  const std::string name(255, 'n');  // NAME_MAX: a suffixed temporary name would not fit
  write_file_atomically(at(name), "x");
  EXPECT_EQ(read(at(name)), "x");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(OutputFile, LinkTargetIsReplacedAndLinkKept) {
  fs::create_directories(dir_ / "real");
  write_file_atomically(at("real/target.json"), "old");
  fs::create_symlink("real/target.json", dir_ / "link.json");
  write_file_atomically(at("link.json"), "new");
  EXPECT_TRUE(S_ISLNK(mode_of(at("link.json"))));
  EXPECT_EQ(read(at("real/target.json")), "new");
  EXPECT_EQ(entries(dir_ / "real"), 1u);  // the temporary file was made beside the target
}

TEST_F(OutputFile, DanglingLinkCreatesItsTarget) {
  fs::create_symlink("made.json", dir_ / "link.json");
  write_file_atomically(at("link.json"), "x");
  EXPECT_TRUE(S_ISLNK(mode_of(at("link.json"))));
  EXPECT_EQ(read(at("made.json")), "x");
}

TEST_F(OutputFile, LinkLoopIsAnInputError) {
  fs::create_symlink("b", dir_ / "a");
  fs::create_symlink("a", dir_ / "b");
  EXPECT_TRUE(
      throws_input_error([&] { ensure_writable(at("a"), "-J"); }, {"-J: ", "Too many levels of symbolic links"}));
  EXPECT_THROW(write_file_atomically(at("a"), "x"), RuntimeFailure);
}

TEST_F(OutputFile, DevNullIsWrittenInPlace) {
  const OutputTarget t = resolve_output("/dev/null");
  EXPECT_EQ(t.kind, OutputKind::kInPlace);
  EXPECT_FALSE(replaced_atomically("/dev/null"));
  write_file_atomically("/dev/null", "x");
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
  JsonLinesFile lines("/dev/null");
  lines.append({{"record", "header"}});
  EXPECT_TRUE(S_ISCHR(mode_of("/dev/null")));
}

TEST_F(OutputFile, DevFullReportsTheFullDevice) {
  ensure_writable("/dev/full", "-J");  // writable; only writing finds it full
  try {
    write_file_atomically("/dev/full", "x");
    FAIL() << "no error";
  } catch (const RuntimeFailure& e) {
    EXPECT_STREQ(e.what(), "cannot write /dev/full: No space left on device");
  }
  JsonLinesFile lines("/dev/full");
  EXPECT_THROW(lines.append({{"record", "header"}}), RuntimeFailure);
}

TEST_F(OutputFile, FifoIsWrittenInPlace) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  std::future<std::string> reader = std::async(std::launch::async, [this] { return read(at("fifo")); });
  write_file_atomically(at("fifo"), "through the fifo\n");
  EXPECT_EQ(reader.get(), "through the fifo\n");
  EXPECT_TRUE(S_ISFIFO(mode_of(at("fifo"))));
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(OutputFile, StandardStreams) {
  EXPECT_EQ(resolve_output("-").kind, OutputKind::kStream);
  EXPECT_EQ(resolve_output("-").stream_fd, 1);
  // /dev/stdout is a link to /proc/self/fd/1, whatever stdout is (a file, a pipe, a terminal).
  const OutputTarget out = resolve_output("/dev/stdout");
  EXPECT_EQ(out.kind, OutputKind::kStream);
  EXPECT_EQ(out.stream_fd, 1);
  EXPECT_EQ(resolve_output("/proc/self/fd/2").stream_fd, 2);
}

TEST_F(OutputFile, DirectoriesAreNeverOpenToOthers) {
  const mode_t old = ::umask(0);
  write_file_atomically(at("new/a/b/p.json"), "x");
  ::umask(old);
  for (const char* directory : {"new", "new/a", "new/a/b"}) EXPECT_EQ(mode_of(at(directory)) & 07777, 0755u);
  EXPECT_EQ(mode_of(at("new/a/b/p.json")) & 07777, 0664u);
}

TEST_F(OutputFile, CheckingCreatesAndChangesNothing) {
  ensure_writable(at("missing/dir/p.json"), "-J");
  EXPECT_FALSE(fs::exists(at("missing")));
  write_file_atomically(at("kept.json"), "kept");
  struct stat before{};
  ASSERT_EQ(::stat(at("kept.json").c_str(), &before), 0);
  ensure_writable(at("kept.json"), "-J");
  struct stat after{};
  ASSERT_EQ(::stat(at("kept.json").c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(read(at("kept.json")), "kept");
  EXPECT_EQ(entries(dir_), 1u);
}

TEST_F(OutputFile, CheckNamesTheFlagAndTheProblem) {
  write_file_atomically(at("a-file"), "");
  EXPECT_TRUE(throws_input_error([&] { ensure_writable(at("a-file/x/p.json"), "--csv"); },
                                 {"--csv: cannot create directory ", "Not a directory"}));
  EXPECT_TRUE(throws_input_error([&] { ensure_writable(dir_.string(), "--jsonl"); }, {"--jsonl: ", "is a directory"}));
  EXPECT_TRUE(throws_input_error([&] { ensure_writable(at("d/"), "-J"); }, {"-J: ", "is a directory"}));
  EXPECT_TRUE(throws_input_error([&] { ensure_writable("", "-J"); }, {"-J: the file name is empty"}));
}

TEST_F(OutputFile, TwoOutputsOnOneFileAreRefused) {
  const std::string s = at("s.json");
  EXPECT_TRUE(throws_input_error([&] { check_outputs({{"-J", s}, {"--csv", s}}); },
                                 {"--csv: ", "names the same file as -J", "(expected a different file for each"}));
  EXPECT_TRUE(throws_input_error([&] { check_outputs({{"-J", s}, {"--trace", at("./x/../s.json")}}); },
                                 {"--trace: ", "-J"}));
  fs::create_symlink("s.json", dir_ / "link.json");  // dangling until written: the same path
  EXPECT_TRUE(throws_input_error([&] { check_outputs({{"-J", s}, {"--timeline", at("link.json")}}); },
                                 {"--timeline: ", "-J"}));
  write_file_atomically(s, "x");
  fs::create_hard_link(s, dir_ / "hard.json");  // another name of the same file
  EXPECT_TRUE(throws_input_error([&] { check_outputs({{"-J", s}, {"--csv", at("hard.json")}}); }, {"--csv: ", "-J"}));
  check_outputs({{"-J", s}, {"--csv", at("s.csv")}, {"--trace", ""}, {"--timeline", ""}});
  check_outputs({{"-J", "/dev/null"}, {"--csv", "/dev/null"}, {"--trace", "-"}, {"--timeline", "-"}});
}

TEST_F(OutputFile, LinkOfAnotherUserInAStickyDirectoryIsNotFollowed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own a link as another user";
  fs::create_directories(dir_ / "shared");
  fs::permissions(dir_ / "shared", fs::perms::all | fs::perms::sticky_bit);
  write_file_atomically(at("victim"), "keep");
  fs::create_symlink(at("victim"), dir_ / "shared/out.json");
  ASSERT_EQ(::lchown(at("shared/out.json").c_str(), 65534, 65534), 0);
  EXPECT_TRUE(throws_input_error([&] { ensure_writable(at("shared/out.json"), "-J"); },
                                 {"-J: ", "a link owned by another user in the shared directory"}));
  EXPECT_THROW(write_file_atomically(at("shared/out.json"), "x"), RuntimeFailure);
  EXPECT_EQ(read(at("victim")), "keep");
}

TEST_F(OutputFile, JsonLinesFileFollowsLinksAndStartsAfresh) {
  write_file_atomically(at("target.jsonl"), "old line\n");
  fs::create_symlink("target.jsonl", dir_ / "link.jsonl");
  {
    JsonLinesFile lines(at("link.jsonl"));
    lines.append({{"record", "header"}});
  }
  EXPECT_TRUE(S_ISLNK(mode_of(at("link.jsonl"))));
  EXPECT_EQ(read(at("target.jsonl")), "{\"record\":\"header\"}\n");
}

TEST_F(OutputFile, JsonLinesNeverThrowOnBytesThatAreNotUtf8) {
  JsonLinesFile lines(at("x.jsonl"));
  lines.append({{"path", std::string("out\xff.json")}});
  EXPECT_EQ(read(at("x.jsonl")), "{\"path\":\"out\xEF\xBF\xBD.json\"}\n");  // U+FFFD
}


// A file rewritten as a run goes: the writer thread writes the newest content; finish() leaves the final
// content, whole, and no temporary file beside it.
TEST_F(OutputFile, FileRewriterEndsWithTheFinalContent) {
  {
    FileRewriter file(at("out.json"));
    for (int row = 0; row < 200; ++row) file.rewrite(fmt::format("{{\"rows\": {}}}\n", row));
    file.finish("{\"rows\": 200, \"complete\": true}\n");
  }
  EXPECT_EQ(read(at("out.json")), "{\"rows\": 200, \"complete\": true}\n");
  EXPECT_EQ(entries(dir_), 1u);
}

// What the writer thread wrote before it is destroyed stays a whole file: one of the contents handed
// over, never a mix (the destructor drops what waits and does not wait for the disk).
TEST_F(OutputFile, FileRewriterLeavesAWholeFileWhenDestroyed) {
  {
    FileRewriter file(at("out.json"));
    file.rewrite("first\n");
    file.rewrite("second\n");
  }
  for (int wait = 0; wait < 100 && entries(dir_) > 1; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (fs::exists(at("out.json"))) {
    const std::string text = read(at("out.json"));
    EXPECT_TRUE(text == "first\n" || text == "second\n") << text;
  }
}

// A write of the thread that failed is thrown on the run's thread, at its next call: exit 3 as a write
// from the run's thread would be.
TEST_F(OutputFile, FileRewriterThrowsAFailedWrite) {
  write_file_atomically(at("a-file"), "");
  FileRewriter file(at("a-file/out.json"));
  bool thrown = false;
  for (int row = 0; row < 500 && !thrown; ++row) {
    try {
      file.rewrite("1\n");
    } catch (const RuntimeFailure& e) {
      thrown = true;
      EXPECT_NE(std::string(e.what()).find("a-file"), std::string::npos) << e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(thrown) << "the thread's failed write never reached the run's thread";
  EXPECT_THROW(file.finish("2\n"), RuntimeFailure);
}

// A device is not rewritten: it gets the content once, at finish() (/dev/full says it is full).
TEST_F(OutputFile, FileRewriterWritesADeviceOnceAtTheEnd) {
  FileRewriter file("/dev/full");
  file.rewrite("1\n");  // nothing written: no error yet
  try {
    file.finish("2\n");
    ADD_FAILURE() << "no error from /dev/full";
  } catch (const RuntimeFailure& e) {
    EXPECT_STREQ(e.what(), "cannot write /dev/full: No space left on device");
  }
}

}  // namespace
}  // namespace commscale
