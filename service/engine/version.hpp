#pragma once

namespace ukes {

// The release this build reports (`ukes --version`, results files, the server).
const char* version();

}  // namespace ukes
