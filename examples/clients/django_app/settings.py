"""Settings of the Django recipe (docs/clients.md): a project with one app,
shop, whose model maps booking.bookings (managed = False) and whose views call
the booking API with connection.cursor().

The database comes from libpq's environment (PGHOST, PGPORT, PGUSER,
PGDATABASE), as examples/clients/test.sh sets it. Debian 12's Django is 3.2,
whose PostgreSQL backend needs psycopg2 (python3-psycopg2); Django 4.2 and
later also take psycopg 3.
"""
import os

SECRET_KEY = "examples-only-not-a-secret"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
INSTALLED_APPS = ["django.contrib.postgres", "shop"]
MIDDLEWARE = []
ROOT_URLCONF = "urls"
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("PGDATABASE", "shop"),
        "USER": os.environ.get("PGUSER", ""),
        "HOST": os.environ.get("PGHOST", ""),
        "PORT": os.environ.get("PGPORT", ""),
        # each booking call is its own short transaction (transaction.atomic
        # in the view), so a resource lock never spans a request
        "ATOMIC_REQUESTS": False,
    }
}

# the longest a booking call waits for a lock, per transaction (SET LOCAL
# lock_timeout; booking 0.8.0 honours it when it is shorter than
# booking.lock_timeout)
BOOKING_LOCK_TIMEOUT = "2s"
