#include <cjson/cJSON.h>
