/* proc: to be written. */
#include "config.h"
