#!/bin/sh
exec python3 -m http.server 8080 --directory /srv/www
