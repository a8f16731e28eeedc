// Reading input files (core/input_file.hpp): regular files and pipes are read once, whole, up to a
// cap; devices, folders and link loops are refused with a message naming the path, before any read.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/input_file.hpp"
#include "input_error_matcher.hpp"

namespace commscale {
namespace {

using testing::throws_input_error;
namespace fs = std::filesystem;

// A fresh folder under the test temp directory, removed at the end.
class InputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("commscale_input_file_test." + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(InputFiles, ReadsARegularFileWhole) {
  EXPECT_EQ(read_input_file(write("a.json", "{\"a\": 1}\n")), "{\"a\": 1}\n");
  EXPECT_EQ(read_input_file(write("empty.json", "")), "");
  const std::string big(300'000, 'x');  // more than one read
  EXPECT_EQ(read_input_file(write("big.json", big)), big);
}

TEST_F(InputFiles, ReadsAPipeOnce) {
  // As `<(cat file)` gives it: /dev/fd/N of a pipe, fed by another process (here a thread).
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text(200'000, 'p');
  std::thread writer([&] {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fds[1]);
  });
  const std::string read = read_input_file("/dev/fd/" + std::to_string(fds[0]));
  writer.join();
  ::close(fds[0]);
  EXPECT_EQ(read, text);
}

TEST_F(InputFiles, RefusesDevicesAndFolders) {
  EXPECT_TRUE(throws_input_error([] { (void)read_input_file("/dev/zero"); },
                                 {"/dev/zero: is a character device", "expected a regular file or a pipe"}));
  EXPECT_TRUE(throws_input_error([] { (void)read_input_file("/dev/null"); }, {"/dev/null: is a character device"}));
  EXPECT_TRUE(throws_input_error([&] { (void)read_input_file(dir_); }, {dir_.string(), "is a directory"}));
}

TEST_F(InputFiles, RefusesMissingFilesAndLinkLoops) {
  EXPECT_TRUE(throws_input_error([&] { (void)read_input_file(dir_ / "none.json"); },
                                 {"none.json: cannot be read (No such file or directory)"}));
  fs::create_symlink("loop.json", dir_ / "loop.json");
  EXPECT_TRUE(throws_input_error([&] { (void)read_input_file(dir_ / "loop.json"); },
                                 {"loop.json: cannot be read (Too many levels of symbolic links)"}));
}

TEST_F(InputFiles, RefusesMoreThanTheCap) {
  const fs::path file = write("big.json", std::string(1001, 'x'));
  EXPECT_EQ(read_input_file(file, 1001).size(), 1001u);
  EXPECT_TRUE(throws_input_error([&] { (void)read_input_file(file, 1000); },
                                 {"big.json: is larger than 1000 bytes (1001 bytes)", "at most 1000 bytes"}));
  EXPECT_EQ(kMaxInputFileBytes, std::size_t{256} * 1024 * 1024);
}

TEST_F(InputFiles, RefusesAPipeThatHoldsMoreThanTheCap) {
  const auto previous = std::signal(SIGPIPE, SIG_IGN);  // the writer outlives the reader here
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    const std::string chunk(4096, 'z');
    for (int i = 0; i < 64; ++i) {
      if (::write(fds[1], chunk.data(), chunk.size()) <= 0) break;  // the reader stopped: EPIPE
    }
    ::close(fds[1]);
  });
  const std::string path = "/dev/fd/" + std::to_string(fds[0]);
  const bool refused = throws_input_error([&] { (void)read_input_file(path, 100'000); }, {"holds more than 100000 bytes"});
  ::close(fds[0]);
  writer.join();
  std::signal(SIGPIPE, previous);
  EXPECT_TRUE(refused);
}

TEST_F(InputFiles, ExistsNamesALinkLoop) {
  EXPECT_TRUE(input_exists(write("a.json", "{}")));
  EXPECT_FALSE(input_exists(dir_ / "none.json"));
  fs::create_symlink("loop.json", dir_ / "loop.json");
  EXPECT_TRUE(throws_input_error([&] { (void)input_exists(dir_ / "loop.json"); }, {"loop.json: cannot be looked at"}));
}

TEST_F(InputFiles, ListsJsonFilesOfAFolder) {
  (void)write("b.json", "{}");
  (void)write("a.json", "{}");
  (void)write("notes.txt", "");
  fs::create_directories(dir_ / "sub");
  (void)write("sub/c.json", "{}");
  fs::create_symlink("b.json", dir_ / "link.json");
  fs::create_symlink("nowhere.json", dir_ / "dangling.json");  // left out, as a missing file
  fs::create_symlink(".", dir_ / "sub" / "self");                // a link to a folder is not followed
  EXPECT_EQ(list_input_folder(dir_, ".json", false),
            (std::vector<fs::path>{dir_ / "a.json", dir_ / "b.json", dir_ / "link.json"}));
  EXPECT_EQ(list_input_folder(dir_, ".json", true),
            (std::vector<fs::path>{dir_ / "a.json", dir_ / "b.json", dir_ / "link.json", dir_ / "sub" / "c.json"}));
}

TEST_F(InputFiles, ListingNamesALinkLoopAndAMissingFolder) {
  fs::create_directories(dir_ / "sub");
  fs::create_symlink("loop.json", dir_ / "sub" / "loop.json");
  EXPECT_TRUE(throws_input_error([&] { (void)list_input_folder(dir_, ".json", true); },
                                 {"sub/loop.json: cannot be looked at (Too many levels of symbolic links)"}));
  EXPECT_TRUE(throws_input_error([&] { (void)list_input_folder(dir_ / "none", ".json", false); },
                                 {"none: cannot be listed", "a readable folder"}));
}

}  // namespace
}  // namespace commscale
