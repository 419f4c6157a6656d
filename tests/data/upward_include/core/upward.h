// A deliberate upward include: tests/CMakeLists.txt checks that the layer check refuses it.
#pragma once
#include "framework/train/trainer.h"
