// The C++ peer of `bridge-benchmarks json-hot-path` (BENCHMARKS.md): the same frame → NDJSON line transform with
// simdjson (Debian libsimdjson-dev). Benchmarks/run builds it next to bridge-benchmarks with g++ -O2; the benchmark
// writes its frame to a file and runs this program on it.
//
//   json-hot-path-simdjson dom|ondemand FRAME_FILE MESSAGES RUNS
//
// Per message: parse the frame, read `type`, `event` and `uid`, and for every item of `data` read its `id` and
// append one event line (the bridge's field order, a fixed event id and time as the benchmark's "decode + key +
// write" rows use) to a buffer that is emptied past 48 KiB, as the bridge's reader hands batches to a sink.
//   dom        the whole frame validated (as the bridge's decoder does); `data` re-serialised by simdjson::minify.
//   ondemand   simdjson's fastest form: UTF-8 and structure checked, values checked only where read; `data` copied
//              as raw bytes (as the bridge does).
// Prints the best items/s of RUNS runs, measured in this thread's CPU time.
#include <simdjson.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr std::string_view fixedID = "evt_fixed";
constexpr std::string_view fixedTime = "2026-12-04T23:40:00.000000Z";
constexpr size_t flushAt = 48 * 1024;

double threadSeconds() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

void appendQuoted(std::string &out, std::string_view text) {
    // Keys, uids and event names of the benchmark need no escapes; a real writer would escape here.
    out += '"';
    out += text;
    out += '"';
}

void appendLine(std::string &out, std::string_view event, std::string_view key, std::string_view data,
                std::string_view uid) {
    out += "{\"id\":";
    appendQuoted(out, fixedID);
    out += ",\"type\":\"directus.items.";
    out += event;
    out += "\",\"event\":";
    appendQuoted(out, event);
    out += ",\"collection\":";
    appendQuoted(out, uid);
    out += ",\"key\":";
    appendQuoted(out, key);
    out += ",\"data\":";
    out += data;
    out += ",\"origin\":\"live\",\"seq\":null,\"time\":\"";
    out += fixedTime;
    out += "\",\"received_at\":\"";
    out += fixedTime;
    out += "\",\"subscription\":";
    appendQuoted(out, uid);
    out += "}\n";
}

// The item's `id` as the line's `key`: a number's digits or a string's text.
std::string_view keyText(simdjson::dom::element id, char *scratch, size_t size) {
    if (id.is_string()) return std::string_view(id.get_string().value_unsafe());
    int64_t number = 0;
    if (id.get_int64().get(number) != simdjson::SUCCESS) return {};
    auto end = std::to_chars(scratch, scratch + size, number).ptr;
    return std::string_view(scratch, size_t(end - scratch));
}

size_t runDOM(const simdjson::padded_string &frame, long messages, std::string &out) {
    simdjson::dom::parser parser;
    size_t items = 0;
    char scratch[32];
    for (long m = 0; m < messages; m++) {
        simdjson::dom::element message;
        if (parser.parse(frame).get(message) != simdjson::SUCCESS) std::abort();
        std::string_view type, event, uid;
        simdjson::dom::array data;
        if (message["type"].get(type) || message["event"].get(event) || message["uid"].get(uid) ||
            message["data"].get(data) || type != "subscription")
            std::abort();
        for (simdjson::dom::element item : data) {
            simdjson::dom::element id;
            if (item["id"].get(id) != simdjson::SUCCESS) continue;
            std::string body = simdjson::minify(item);
            appendLine(out, event, keyText(id, scratch, sizeof scratch), body, uid);
            items++;
        }
        if (out.size() > flushAt) out.clear();
    }
    return items;
}

size_t runOnDemand(const simdjson::padded_string &frame, long messages, std::string &out) {
    simdjson::ondemand::parser parser;
    size_t items = 0;
    // The uid follows `data` in Directus's frames and On-Demand reads forward: each item's key and raw bytes wait
    // here (views into `frame`, keys in small strings) until the uid is read.
    std::vector<std::pair<std::string, std::string_view>> pending;
    char scratch[32];
    for (long m = 0; m < messages; m++) {
        simdjson::ondemand::document message;
        if (parser.iterate(frame).get(message) != simdjson::SUCCESS) std::abort();
        std::string_view type, event, uid;
        if (message["type"].get(type) || type != "subscription") std::abort();
        std::string eventText;
        if (message["event"].get(event)) std::abort();
        eventText = event;
        simdjson::ondemand::array data;
        if (message["data"].get(data)) std::abort();
        pending.clear();
        for (auto element : data) {
            simdjson::ondemand::object item;
            if (element.get(item)) std::abort();
            simdjson::ondemand::value id;
            if (item.find_field_unordered("id").get(id)) continue;
            std::string key;
            if (id.type() == simdjson::ondemand::json_type::string) {
                std::string_view text;
                if (id.get(text)) std::abort();
                key = text;
            } else {
                int64_t number = 0;
                if (id.get(number)) std::abort();
                key.assign(scratch, size_t(std::to_chars(scratch, scratch + sizeof scratch, number).ptr - scratch));
            }
            std::string_view body;
            if (item.raw_json().get(body)) std::abort();
            pending.emplace_back(std::move(key), body);
        }
        if (message["uid"].get(uid)) std::abort();
        for (auto &[key, body] : pending) appendLine(out, eventText, key, body, uid);
        items += pending.size();
        if (out.size() > flushAt) out.clear();
    }
    return items;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s dom|ondemand FRAME_FILE MESSAGES RUNS\n", argv[0]);
        return 64;
    }
    std::string mode = argv[1];
    simdjson::padded_string frame;
    if (simdjson::padded_string::load(argv[2]).get(frame)) {
        std::fprintf(stderr, "cannot read %s\n", argv[2]);
        return 66;
    }
    long messages = std::atol(argv[3]), runs = std::atol(argv[4]);
    if ((mode != "dom" && mode != "ondemand") || messages < 1 || runs < 1) return 64;
    std::string out;
    out.reserve(64 * 1024);
    double best = 0;
    for (long run = 0; run < runs; run++) {
        double start = threadSeconds();
        size_t items = mode == "dom" ? runDOM(frame, messages, out) : runOnDemand(frame, messages, out);
        double rate = double(items) / (threadSeconds() - start);
        if (rate > best) best = rate;
    }
    if (std::getenv("JSON_HOT_PATH_PRINT") != nullptr) {  // the last lines, for the benchmark's agreement check
        std::fwrite(out.data(), 1, out.size(), stdout);
        return 0;
    }
    std::printf("%.0f\n", best);
    return 0;
}
