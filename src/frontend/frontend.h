// The frontend language, all of it: include this in programs.
//
//   #include "frontend/frontend.h"
//   namespace fe = radixlm::frontend;
//   void Qa(fe::State& s, const std::string& q) {
//     s += fe::user("Q: " + q);
//     s += fe::assistant(fe::gen("answer", {.max_tokens = 64, .stop = {"\n"}}));
//   }
#pragma once

#include "frontend/backend.h"
#include "frontend/chat_roles.h"
#include "frontend/engine_backend.h"
#include "frontend/gen_options.h"
#include "frontend/interpreter.h"
#include "frontend/ir.h"
#include "frontend/language.h"
#include "frontend/recording_backend.h"
#include "frontend/select_methods.h"
#include "frontend/state.h"
#include "frontend/tracer.h"
#ifdef RADIXLM_FRONTEND_HAVE_REMOTE
#include "frontend/remote_backend.h"
#endif
