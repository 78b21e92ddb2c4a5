// Fault injection for the end-to-end tests, behind one switch: serve
// installs it when the environment has BULLETED_FAULT_INJECTION=1 (and
// warns in the log: never in production). A request's headers then say
// what goes wrong in it:
//
//   x-bulleted-inject-stale: N     its next N placement reads find the
//                                  neighbours changed (a retry, then 409)
//   x-bulleted-inject-swap: N      its next N commits (pds mode) find the
//                                  repo changed (a refresh, then 409)
//   x-bulleted-inject-expired: 1   its PDS access token has expired
//                                  (`refresh`: the refresh token too)
//
// Nothing else reads these headers: the API's handler is decorated (the
// headers are read around each request), and so are the record sink and
// the PDS session a write goes through (WriteServices).
#pragma once

#include <memory>

#include "appview/http/server.hpp"
#include "appview/xrpc/write_services.hpp"

namespace bulleted::appview {

class InjectedFaults final : public WriteServices {
 public:
  // Decorates `plain`; spoils sessions through `sessions` (pds mode; null
  // in local mode).
  InjectedFaults(WriteServices& plain, PdsSessions* sessions)
      : plain_(plain), sessions_(sessions) {}

  // The API's handler, with each request's faults read from its headers
  // for as long as it runs (on its worker thread).
  HttpHandler decorate(HttpHandler inner);

  Result<std::unique_ptr<RecordSink>> sink(schema::Store& store, PdsSession* session) override;
  PlacementFaults* placement() override;

 private:
  WriteServices& plain_;
  PdsSessions* sessions_;
};

}  // namespace bulleted::appview
