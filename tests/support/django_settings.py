"""The test site's Django settings module, as ``django-admin startproject`` writes one: ``DEBUG``
is on, as a new project has it (Django's debug cursor then formats every query it logs with its
parameters), and the admin stack plus paysdk's app are installed.

``DATABASES`` is the one setting each test process gives (``django_site.configure``): its files
and servers are the process's own.
"""

from __future__ import annotations

DEBUG = True

SECRET_KEY = "django-tests-only"

ALLOWED_HOSTS = ["testserver"]

ROOT_URLCONF = "tests.support.django_site"

INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.admin",
    "paysdk.integrations.django",
]

MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

USE_TZ = True
