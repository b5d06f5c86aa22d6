from django.contrib.postgres.fields import DateTimeRangeField
from django.db import models


class Booking(models.Model):
    """booking.bookings, read only: the extension owns the table (managed =
    False: no migration creates or alters it), and every write goes through
    its functions. grant_client gives SELECT on it."""

    STATUSES = [(s, s) for s in ("pending", "confirmed", "cancelled", "expired", "waiting")]

    id = models.BigIntegerField(primary_key=True)
    resource_id = models.BigIntegerField()
    guest = models.TextField()
    quantity = models.IntegerField()
    during = DateTimeRangeField(null=True)          # NULL for seats
    status = models.TextField(choices=STATUSES)      # the enum booking.status, read as text
    expires_at = models.DateTimeField(null=True)
    created_at = models.DateTimeField()
    metadata = models.JSONField(null=True)           # 0.8.0: the caller's own data
    group_id = models.BigIntegerField(null=True)

    class Meta:
        managed = False
        # a schema-qualified name: Django quotes neither part when the name
        # starts and ends with a double quote
        db_table = '"booking"."bookings"'

    @classmethod
    def get_booking(cls, booking_id):
        """booking.get_booking(id) as a model instance, or None: works for a
        role without SELECT on the table; the columns have the fields' names."""
        rows = list(cls.objects.raw("SELECT * FROM booking.get_booking(%s::bigint)", [booking_id]))
        return rows[0] if rows else None
