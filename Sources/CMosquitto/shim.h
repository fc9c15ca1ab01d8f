// libmosquitto (the MQTT client of Eclipse Mosquitto) for Swift. Its API has no variadic calls the bridge needs,
// so the shim only includes it; helpers would go here with the prefix cmosquitto_.
#ifndef CMOSQUITTO_SHIM_H
#define CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

#endif
