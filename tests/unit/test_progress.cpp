// The progress line's text: the share done, the amount of the total, the rate and the time left.
#include "io/progress.h"

#include <doctest/doctest.h>

using bk::clock_text;
using bk::progress_text;

TEST_CASE("clock_text: minutes and seconds, hours when needed") {
  CHECK(clock_text(0) == "0:00");
  CHECK(clock_text(48.4) == "0:48");
  CHECK(clock_text(48.6) == "0:49");
  CHECK(clock_text(725) == "12:05");
  CHECK(clock_text(3 * 3600 + 2 * 60 + 17) == "3:02:17");
  CHECK(clock_text(-5) == "0:00");
}

TEST_CASE("progress_text with a total in bytes: percentage, amounts, rate, ETA, then the tool's counts") {
  // 1.2 GB of 2.9 GB in 34.3 s: 35 MB/s, 1.7 GB left, 48.6 s.
  CHECK(progress_text("", 1'200'000'000, 2'900'000'000, "", 1'200'000'000 / 35e6, "") ==
        "41% 1.20 GB/2.90 GB 35.0 MB/s ETA 0:49");
  CHECK(progress_text("reading", 500'000, 1'000'000, "", 2.0, "12 documents") ==
        "reading 50% 500.0 kB/1.0 MB 250.0 kB/s ETA 0:02, 12 documents");
  CHECK(progress_text("pass 1/2", 0, 1000, "", 0.5, "") == "pass 1/2 0% 0 B/1.0 kB 0 B/s ETA -:--");
  // More than the total (a file that grew) shows as 100%, with no time left.
  CHECK(progress_text("", 1500, 1000, "", 1.0, "") == "100% 1.0 kB/1.0 kB 1.5 kB/s ETA 0:00");
}

TEST_CASE("progress_text with a count total: the unit is named") {
  CHECK(progress_text("", 420, 1000, "batches", 10.0, "mlm_accuracy 0.7100") ==
        "42% 420/1000 batches 42.0 batches/s ETA 0:14, mlm_accuracy 0.7100");
  CHECK(progress_text("writing", 3, 4, "instances", 1.0, "") == "writing 75% 3/4 instances 3.0 instances/s ETA 0:00");
  CHECK(progress_text("writing", 2048, 4503, "instances", 0.004, "") ==
        "writing 45% 2048/4503 instances 512000 instances/s ETA 0:00");
}

TEST_CASE("progress_text without a total: counts, amount and rate, as before totals existed") {
  CHECK(progress_text("", 2'000'000, 0, "", 2.0, "1234 pages, 612 articles") ==
        "1234 pages, 612 articles, 2.0 MB (1.0 MB/s)");
  CHECK(progress_text("", 2'000'000, 0, "", 2.0, "") == "2.0 MB (1.0 MB/s)");
  // A stage that has counted nothing yet shows only its label and counts.
  CHECK(progress_text("making instances", 0, 0, "", 3.0, "50 documents") == "making instances 50 documents");
}
