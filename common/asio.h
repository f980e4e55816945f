#pragma once
// Boost 1.74's asio/awaitable.hpp uses std::exchange without including
// <utility>, which g++ 12 in C++20 mode rejects. Include asio through here.
#include <utility>

#include <boost/asio.hpp>
