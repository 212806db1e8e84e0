"""The JSON API under ``/api/v1`` (routes), its errors (errors), the JSON shapes (shapes),
what each view does around its service call (calls) and the OpenAPI description (openapi)."""
