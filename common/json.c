/* json: to be written. */
#include "config.h"
