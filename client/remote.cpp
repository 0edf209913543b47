#include "client/remote.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "client/commands.hpp"
#include "service/protocol/metadata.hpp"
#include "service/protocol/pem_file.hpp"

namespace ukes::cli {

namespace {

constexpr std::chrono::milliseconds kRedrawInterval{100};
constexpr std::chrono::seconds kLogInterval{2};  // progress lines when not on a terminal
constexpr int kBarWidth = 16;

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char text[64];
  if (s < 60)
    std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%lld min %02lld s", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lld h %02lld min", s / 3600, s / 60 % 60);
  return text;
}

int terminal_columns() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string bar_graphic(const v1::Progress& p, int width) {
  const double fraction = p.systems_total() > 0
                              ? std::clamp(static_cast<double>(p.systems_done()) /
                                               static_cast<double>(p.systems_total()),
                                           0.0, 1.0)
                              : 0.0;
  const auto filled = static_cast<std::size_t>(fraction * width);
  std::string bar(1, '[');
  bar.append(filled, '#');
  bar.append(static_cast<std::size_t>(width) - filled, '-');
  bar.append("] ");
  return bar;
}

// Percent done, rounded down so that 100.0 means all of them.
double percent_done(const v1::Progress& p) {
  if (p.systems_total() <= 0) return 0.0;
  return std::floor(1000.0 * static_cast<double>(p.systems_done()) /
                    static_cast<double>(p.systems_total())) /
         10.0;
}

// Done and total systems and percent as `counts_format` has them, then rate and ETA when known.
std::string progress_line(const v1::Progress& p, const char* counts_format) {
  char text[160];
  std::snprintf(text, sizeof text, counts_format, static_cast<long long>(p.systems_done()),
                static_cast<long long>(p.systems_total()), percent_done(p));
  std::string s = text;
  if (p.system_steps_per_s() > 0) {
    std::snprintf(text, sizeof text, ", %.3g system-steps/s", p.system_steps_per_s());
    s += text;
  }
  if (p.eta_s() >= 0 && p.systems_done() < p.systems_total())
    s += ", ETA " + format_duration(p.eta_s());
  return s;
}

}  // namespace

namespace {

ConnectionSecurity& connection_security() {
  static ConnectionSecurity security;
  return security;
}

std::shared_ptr<grpc::ChannelCredentials> channel_credentials() {
  const ConnectionSecurity& s = connection_security();
  if (!s.tls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  if (!s.ca_file.empty()) ssl.pem_root_certs = read_pem_file(s.ca_file, "--ca");
  if (!s.client_cert.empty() || !s.client_key.empty()) {
    ssl.pem_cert_chain = read_pem_file(s.client_cert, "--client-cert");
    ssl.pem_private_key = read_pem_file(s.client_key, "--client-key");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (s.token.empty()) return credentials;
  return grpc::CompositeChannelCredentials(credentials, grpc::AccessTokenCredentials(s.token));
}

}  // namespace

void set_connection_security(ConnectionSecurity security) {
  connection_security() = std::move(security);
  channel_credentials();  // unreadable files fail here, before any call
}

std::shared_ptr<grpc::Channel> make_channel(const std::string& server) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(server, channel_credentials(), args);
}

const char* status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN_CODE";
  }
}

int report_rpc_error(const grpc::Status& status, const std::string& server) {
  const std::string& message = status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::INVALID_ARGUMENT:
      std::fprintf(stderr, "ukes: spec error: %s\n", message.c_str());
      return kExitUsage;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      std::fprintf(stderr, "ukes: limit exceeded: %s\n", message.c_str());
      return kExitUsage;
    case grpc::StatusCode::UNAVAILABLE:
      std::fprintf(stderr, "ukes: cannot reach server %s: %s\n", server.c_str(), message.c_str());
      return kExitFailure;
    default:
      std::fprintf(stderr, "ukes: server error (%s): %s\n", status_code_name(status.error_code()),
                   message.c_str());
      return kExitFailure;
  }
}

bool QueueWait::again(const grpc::ClientContext& context, const grpc::Status& status) {
  if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return false;
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto hint = trailers.find(kRetryAfterMetadataKey);
  if (hint == trailers.end()) return false;
  double after_s = 1.0;
  try {
    after_s =
        std::clamp(std::stod(std::string(hint->second.data(), hint->second.size())), 0.1, 30.0);
  } catch (const std::exception&) {
  }
  // 1, 2, 4, ... times the hint, at most 30 s a wait.
  const double wait_s = std::min(30.0, after_s * std::pow(2.0, std::min(tries_, 5)));
  const auto waited = std::chrono::steady_clock::now() - start_;
  if (waited + std::chrono::duration<double>(wait_s) > kMaxWait) return false;
  if (tries_ == 0)
    std::fprintf(stderr, "ukes: %s; waiting to try again (up to %lld s)\n",
                 status.error_message().c_str(), static_cast<long long>(kMaxWait.count()));
  ++tries_;
  std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  return true;
}

std::string progress_text(const v1::Progress& p) {
  return progress_line(p, "%lld / %lld systems (%.1f%%)");
}

void ProgressBar::show(const v1::Progress& progress) {
  const auto now = std::chrono::steady_clock::now();
  if (!interactive_) {
    if (last_draw_ != std::chrono::steady_clock::time_point{} && now - last_draw_ < kLogInterval)
      return;
    last_draw_ = now;
    std::fprintf(stderr, "ukes: %s\n", progress_text(progress).c_str());
    std::fflush(stderr);
    return;
  }
  if (drawn_ > 0 && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  const int columns = terminal_columns();
  const std::string text = progress_line(progress, "%lld/%lld (%.1f%%)");  // compact
  // A bar of fixed width where the line has room for it, so that it does not jitter.
  const bool room = static_cast<int>(text.size()) + kBarWidth + 4 <= columns;
  std::string line = room ? bar_graphic(progress, kBarWidth) + text : text;
  line.resize(std::min(line.size(), static_cast<std::size_t>(std::max(columns - 1, 1))));
  const std::size_t width = line.size();
  if (line.size() < drawn_) line.append(drawn_ - line.size(), ' ');  // cover the longer old line
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  drawn_ = std::max<std::size_t>(width, 1);
}

void ProgressBar::clear() {
  if (drawn_ == 0) return;
  std::fprintf(stderr, "\r%s\r", std::string(drawn_, ' ').c_str());
  std::fflush(stderr);
  drawn_ = 0;
}

}  // namespace ukes::cli
